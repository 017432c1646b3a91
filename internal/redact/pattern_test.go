package redact

import (
	"strings"
	"testing"
)

func TestPatterns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		// Cards.
		{"card contiguous", "card 4111111111111111 ok", "card [REDACTED:card] ok"},
		{"card spaced", "4111 1111 1111 1111", "[REDACTED:card]"},
		{"card dashed", "pay with 5555-5555-5555-4444.", "pay with [REDACTED:card]."},
		{"card amex grouping", "amex 3782 822463 10005", "amex [REDACTED:card]"},
		{"card 19 digits", "6212345678901234569", "[REDACTED:card]"},
		{"card 13 digits", "(4222222222222)", "([REDACTED:card])"},
		{"card then a year", "4111 1111 1111 1111 2027", "[REDACTED:card] 2027"},
		{"card failing luhn", "card 4111111111111112 ok", "card 4111111111111112 ok"},
		{"card grouped failing luhn", "4111 1111 1111 1112", "4111 1111 1111 1112"},
		{"millisecond timestamp", "at 1718000000006", "at 1718000000006"},
		{"20 digits", "42424242424242424242", "42424242424242424242"},
		{"12 digits", "424242424242", "424242424242"},
		{"card inside a hex hash", "sha256:ab4111111111111111cd", "sha256:ab4111111111111111cd"},
		{"card glued to letters", "x4111111111111111", "x4111111111111111"},
		{"card in a decimal", "0.4111111111111111", "0.4111111111111111"},
		{"single digit groups", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"},

		// SSNs.
		{"ssn dashed", "SSN 123-45-6789.", "SSN [REDACTED:ssn]."},
		{"ssn dashed without context", "id 078-05-1120 on file", "id [REDACTED:ssn] on file"},
		{"ssn bare with context", "ssn: 123456789", "ssn: [REDACTED:ssn]"},
		{"ssn spaced with context", "Social Security Number 123 45 6789", "Social Security Number [REDACTED:ssn]"},
		{"ssn bare without context", "order 123456789 shipped", "order 123456789 shipped"},
		{"ssn spaced without context", "call 123 45 6789", "call 123 45 6789"},
		{"ssn cue inside a word", "classname 123456789", "classname 123456789"},
		{"ssn inside a longer dashed number", "1-123-45-6789", "1-123-45-6789"},
		{"ssn followed by more digits", "123-45-6789-0", "123-45-6789-0"},
		{"phone number", "call 555-123-4567", "call 555-123-4567"},

		// Account numbers.
		{"account", "Account #: 12345678, thanks", "Account #: ****5678, thanks"},
		{"acct no", "acct no. 9876-5432-10", "acct no. ****3210"},
		{"a/c", "A/C 00123456789", "A/C ****6789"},
		{"account id key", "account_id=AB12345678", "account_id=****5678"},
		{"account number", "account number: 12345678901234567", "account number: ****4567"},
		{"iban", "IBAN DE89 3704 0044 0532 0130 00 sent", "IBAN ****3000 sent"},
		{"iban contiguous", "iban: GB82WEST12345698765432", "iban: ****5432"},
		{"account words", "account settings updated", "account settings updated"},
		{"accounting", "accounting 12345678", "accounting 12345678"},
		{"account too short", "account 12345", "account 12345"},
		{"account too few digits", "account ABC123X", "account ABC123X"},
		{"account too long", "account 123456789012345678", "account 123456789012345678"},

		// Emails.
		{"email", "write to jane.doe+tag@example.co.uk.", "write to [REDACTED:email]."},
		{"email in angle brackets", "<ops@corp.example>", "<[REDACTED:email]>"},
		{"at without domain", "meet @ noon, user@localhost", "meet @ noon, user@localhost"},
		{"package version", "npm i @scope/pkg@1.2.3", "npm i @scope/pkg@1.2.3"},
		{"url credentials", "postgres://app:pw123@db:5432/x", "postgres://app:[REDACTED:secret]@db:5432/x"},

		// Key-shaped tokens.
		{"openai key", "OPENAI sk-proj-abcdefghijklmnop1234 end", "OPENAI [REDACTED:key] end"},
		{"stripe key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:key]"},
		{"aws key id", "id AKIAIOSFODNN7EXAMPLE.", "id [REDACTED:key]."},
		{"github token", "ghp_abcdefghijklmnopqrstuvwxyz0123", "[REDACTED:key]"},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghij", "[REDACTED:key]"},
		{"slack token", "xoxb-1234567890-abcdefABCDEF", "[REDACTED:key]"},
		{"short sk-", "sk-learn is a library", "sk-learn is a library"},
		{"akia too short", "AKIA1234", "AKIA1234"},
		{"sk inside a word", "task-abcdefghijklmnopqrstu", "task-abcdefghijklmnopqrstu"},
		{"bearer", "Bearer abc.def-123_456", "Bearer [REDACTED:token]"},
		{"bearer long word", "bearer abcdefghijklmnopqrstuvwxyz", "bearer [REDACTED:token]"},
		{"bearer prose", "the bearer instrument", "the bearer instrument"},
		{"jwt", "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl end", "t=[REDACTED:jwt] end"},
		{"jwt without signature", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "[REDACTED:jwt]"},
		{"eyJ alone", "eyJhbGciOiJub25lIn0 only", "eyJhbGciOiJub25lIn0 only"},

		// Labelled secrets.
		{"password any length", "password=hunter2&user=bob", "password=[REDACTED:secret]&user=bob"},
		{"password json-ish", `{"db_password": "s3 cr3t", "user": "bob"}`, `{"db_password": "[REDACTED:secret]", "user": "bob"}`},
		{"password with escaped quote", `{"password":"ab\"cd","u":1}`, `{"password":"[REDACTED:secret]","u":1}`},
		{"password in escaped json", `msg="{\"password\":\"abcd\"}"`, `msg="{\"password\":\"[REDACTED:secret]\"}"`},
		{"token 32 hex", "token=0123456789abcdef0123456789abcdef", "token=[REDACTED:secret]"},
		{"api key header", "X-Api-Key: QWxhZGRpbjpvcGVuIHNlc2FtZQ0123456789ab", "X-Api-Key: [REDACTED:secret]"},
		{"secret base64", "client_secret: 'dGhpcyBpcyBhIHZlcnkgbG9uZyBzZWNyZXQ='", "client_secret: '[REDACTED:secret]'"},
		{"short key kept", "key=Enter token=abc", "key=Enter token=abc"},
		{"authorization basic", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED:secret]"},
		{"authorization bare", "authorization=abc123", "authorization=[REDACTED:secret]"},
		{"cookie", "Cookie: sid=abc; theme=dark\nnext", "Cookie: [REDACTED:secret]\nnext"},
		{"secret reference", "value: {$secret: production_database_admin_password_ref}", "value: {$secret: production_database_admin_password_ref}"},
		{"password structure", "password: {$secret: db_pw}", "password: {$secret: db_pw}"},
		{"password empty", "password:\nnext", "password:\nnext"},
		{"shell pwd", "PWD=/home/me", "PWD=/home/me"},

		// Ordinary text.
		{"date", "due 2024-01-15 at 12:30:45", "due 2024-01-15 at 12:30:45"},
		{"amount", "total $1,234.56 (USD 1234.56)", "total $1,234.56 (USD 1234.56)"},
		{"uuid", "run 123e4567-e89b-12d3-a456-426614174000", "run 123e4567-e89b-12d3-a456-426614174000"},
		{"sha256", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
		{"phone", "+1 (415) 555-0132", "+1 (415) 555-0132"},
		{"url", "https://example.com:8443/a?b=c#d", "https://example.com:8443/a?b=c#d"},
		{"empty", "", ""},
	}
	r := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestWithoutPatterns(t *testing.T) {
	t.Parallel()
	in := "mail jane@example.com card 4111111111111111"
	tests := []struct {
		name string
		off  []Kind
		want string
	}{
		{"all on", nil, "mail [REDACTED:email] card [REDACTED:card]"},
		{"email off", []Kind{KindEmail}, "mail jane@example.com card [REDACTED:card]"},
		{"all off", Kinds(), in},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := New(WithoutPatterns(tt.off...), WithLiterals("never-seen"))
			if got := r.String(in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLuhn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"4111111111111111", true},
		{"4111 1111 1111 1111", true},
		{"4111111111111112", false},
		{"378282246310005", true},
		{"79927398713", true},
		{"79927398710", false},
	}
	for _, tt := range tests {
		if got := luhn(tt.in); got != tt.want {
			t.Errorf("luhn(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestPatternsAdversarial checks inputs built to make a scanner quadratic
// still finish quickly.
func TestPatternsAdversarial(t *testing.T) {
	t.Parallel()
	r := New()
	for name, in := range map[string]string{
		"eyJ runs":     strings.Repeat("eyJa-", 200000),
		"jwt parts":    strings.Repeat("eyJa.", 200000),
		"at signs":     strings.Repeat("a@", 500000),
		"long domain":  "x@" + strings.Repeat("a", 1<<20),
		"labels":       strings.Repeat("key=", 250000),
		"digit groups": strings.Repeat("4111 ", 200000),
		"bearers":      strings.Repeat("bearer ", 150000),
		"accounts":     strings.Repeat("account ", 130000),
		"sk runs":      strings.Repeat("sk-a-", 200000),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_ = r.String(in)
		})
	}
}

// TestPatternsTruncated feeds every prefix and suffix of inputs that trigger
// each pattern, so no scanner reads past either end of its input.
func TestPatternsTruncated(t *testing.T) {
	t.Parallel()
	r := New(WithLiterals("hunter2"))
	inputs := []string{
		"4111 1111 1111 1111", "123-45-6789", "ssn 123 45 6789", "Account No.: 12-345678", "IBAN DE89 3704",
		"a.b@example.com", "https://u:p@h", "sk-abcdefghijklmnopq", "sk_live_abcdefghijk", "AKIAIOSFODNN7EXAMPLE",
		"ghp_abcdefghijklmnopqrstu", "github_pat_abcdefghijklmnopqrstu", "xoxb-abcdefghijk", "Bearer abc.def-123",
		"eyJa.eyJb.c", `"password": "x y"`, `password=\"ab\"`, "token=0123456789abcdef0123456789abcdef",
		"Authorization: Digest a=1, b=2", "Authorization: Basic x", "cookie: a=b", "hunter2",
	}
	for _, in := range inputs {
		for i := 0; i <= len(in); i++ {
			_ = r.String(in[:i])
			_ = r.String(in[i:])
		}
	}
}
