package redact

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

type login struct {
	User     string            `json:"user"`
	Password string            `json:"password"`
	Email    string            `json:"email"`
	Tags     []string          `json:"tags"`
	Extra    map[string]string `json:"extra"`
}

type shown string

func (s shown) String() string { return "shown:" + string(s) }

func TestValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"string", "pw hunter2", "pw [REDACTED]"},
		{"bytes", []byte("pw hunter2"), []byte("pw [REDACTED]")},
		{"bool", true, true},
		{"int", 42, 42},
		{"card as int", int64(4111111111111111), "[REDACTED:card]"},
		{"card as float", 4111111111111111.0, "[REDACTED:card]"},
		{"literal as int", 12345678, "[REDACTED]"},
		{"named string unchanged", domain.RiskSafe, domain.RiskSafe},
		{"named string redacted", domain.Risk("hunter2"), "[REDACTED]"},
		{"stringer", shown("x"), shown("x")},
		{"stringer redacted", shown("hunter2"), "shown:[REDACTED]"},
		{"error", errors.New("login hunter2 failed"), "login [REDACTED] failed"},
		{"map", map[string]any{
			"note":            "hunter2",
			"password":        "anything",
			"token":           map[string]any{"a": 1},
			"api_key":         "",
			"secret":          nil,
			"is_password_set": true,
			"$secret":         "db_password",
			"key":             "Enter",
			"tokens":          1200,
			"nested":          []any{"jane@example.com", 1.5, map[string]any{"Authorization": "Basic abc"}},
		}, map[string]any{
			"note":            "[REDACTED]",
			"password":        "[REDACTED]",
			"token":           "[REDACTED]",
			"api_key":         "",
			"secret":          nil,
			"is_password_set": true,
			"$secret":         "db_password",
			"key":             "Enter",
			"tokens":          1200,
			"nested":          []any{"[REDACTED:email]", 1.5, map[string]any{"Authorization": "[REDACTED]"}},
		}},
		{"string map", map[string]string{"pwd": "x", "user": "hunter2"}, map[string]string{"pwd": "[REDACTED]", "user": "[REDACTED]"}},
		{"string slice", []string{"a", "hunter2"}, []string{"a", "[REDACTED]"}},
		{"struct", login{User: "bob", Password: "pw", Email: "bob@example.com", Tags: []string{"hunter2"}, Extra: map[string]string{"cookie": "c=1"}},
			map[string]any{"user": "bob", "password": "[REDACTED]", "email": "[REDACTED:email]", "tags": []any{"[REDACTED]"}, "extra": map[string]any{"cookie": "[REDACTED]"}}},
		{"pointer", &login{User: "hunter2"},
			map[string]any{"user": "[REDACTED]", "password": "", "email": "", "tags": nil, "extra": nil}},
		{"typed map", map[string]int{"n": 4111111111111111 % 1000}, map[string]any{"n": json.Number("111")}},
		{"function fails closed", func() {}, Marker},
		{"channel fails closed", make(chan int), Marker},
	}
	b := setup(t, "hunter2", "12345678")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := b.r.Value(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Value(%#v)\n got %#v\nwant %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestValueCyclicAndDeep(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	got := b.r.Value(cyclic)
	// Descends to the depth bound, then fails closed.
	depth := 0
	for m, ok := got.(map[string]any); ok; m, ok = m["self"].(map[string]any) {
		depth++
	}
	if depth == 0 || depth > maxDepth+1 {
		t.Errorf("depth = %d", depth)
	}
	type node struct{ Next *node }
	n := &node{}
	n.Next = n
	if got := b.r.Value(n); got != Marker {
		t.Errorf("cyclic struct: got %v", got)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"strings", `{"note": "pw hunter2", "list": ["jane@example.com", "ok"]}`,
			`{"note": "pw [REDACTED]", "list": ["[REDACTED:email]", "ok"]}`},
		{"layout and order kept", "{\n  \"z\": 1,\n  \"a\": [1, 2.50, -3e2]\n}", "{\n  \"z\": 1,\n  \"a\": [1, 2.50, -3e2]\n}"},
		{"sensitive keys", `{"password":"x","Api-Key":"y","access_token":"z","AUTHORIZATION":"Basic q","client_secret":{"a":[1,{"b":2}]},"pin":1234,"user":"bob"}`,
			`{"password":"[REDACTED]","Api-Key":"[REDACTED]","access_token":"[REDACTED]","AUTHORIZATION":"[REDACTED]","client_secret":"[REDACTED]","pin":"[REDACTED]","user":"bob"}`},
		{"harmless values under sensitive keys", `{"password":null,"token":"","secret":false}`, `{"password":null,"token":"","secret":false}`},
		{"not sensitive", `{"key":"Enter","tokens":12,"token_type":"bearer","$secret":"db_password","sensitive":true}`,
			`{"key":"Enter","tokens":12,"token_type":"bearer","$secret":"db_password","sensitive":true}`},
		{"sensitive key in array of objects", `[{"password":"a"},{"password":["b"]}]`, `[{"password":"[REDACTED]"},{"password":"[REDACTED]"}]`},
		{"escaped forms", `{"a":"p\u0040ss hunter2\n", "b":"\"quoted\""}`, `{"a":"p@ss [REDACTED]\n", "b":"\"quoted\""}`},
		{"literal only visible decoded", `{"a":"hun\u0074er2"}`, `{"a":"[REDACTED]"}`},
		{"card number as number", `{"n":4111111111111111,"m":42}`, `{"n":"[REDACTED:card]","m":42}`},
		{"keys are redacted too", `{"hunter2":1}`, `{"[REDACTED]":1}`},
		{"brackets inside strings", `{"x":"}{][","password":{"y":"}"},"z":1}`, `{"x":"}{][","password":"[REDACTED]","z":1}`},
		{"scalar document", `"hunter2"`, `"[REDACTED]"`},
	}
	b := setup(t, "hunter2")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := b.r.JSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("output is not valid JSON: %s", got)
			}
		})
	}
}

func TestJSONInvalid(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, in := range []string{``, `{`, `{"a":}`, `hunter2`} {
		if _, err := b.r.JSON([]byte(in)); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("JSON(%q) error = %v, want ErrInvalidJSON", in, err)
		}
	}
}

func TestJSONRunRecord(t *testing.T) {
	t.Parallel()
	b := setup(t, "hunter2")
	rec := domain.RunRecord{
		RunID:       "run-1",
		ContentHash: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Inputs:      map[string]any{"member_id": "M-1001", "password": "hunter2", "ssn": "123-45-6789"},
		Message:     "typed hunter2",
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	out, err := b.r.JSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"hunter2", "123-45-6789"} {
		if strings.Contains(string(out), leak) {
			t.Errorf("%q leaked: %s", leak, out)
		}
	}
	var back domain.RunRecord
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.ContentHash != rec.ContentHash || back.Inputs["member_id"] != "M-1001" {
		t.Errorf("record damaged: %+v", back)
	}
}

func TestIsSensitiveKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		want bool
	}{
		{"password", true}, {"Password", true}, {"db_password", true}, {"new-passwd", true},
		{"api_key", true}, {"X-Api-Key", true}, {"apiKey", true}, {"secret", true}, {"client_secret", true},
		{"token", true}, {"access_token", true}, {"csrfToken", true}, {"Authorization", true},
		{"proxy-authorization", true}, {"Set-Cookie", true}, {"pin", true}, {"credentials", true},
		{"secret_access_key", true},
		{"key", false}, {"tokens", false}, {"token_type", false}, {"$secret", false}, {"secret_ref_count", false},
		{"sensitive", false}, {"user", false}, {"", false}, {"spin", false},
	}
	for _, tt := range tests {
		if got := IsSensitiveKey(tt.key); got != tt.want {
			t.Errorf("IsSensitiveKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
	r := New(WithSensitiveKeys("member-id"))
	if got := r.Value(map[string]any{"MEMBER_ID": "M-1"}); fmt.Sprint(got) != "map[MEMBER_ID:[REDACTED]]" {
		t.Errorf("WithSensitiveKeys: %v", got)
	}
}

func FuzzJSON(f *testing.F) {
	f.Add(`{"password":"x","a":["hunter2",1,{"b":null}]}`)
	f.Add(`[1.5e3,"jane@example.com",true]`)
	f.Add(`{"token":{"a":"}"},"n":4111111111111111}`)
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			t.Skip()
		}
		r := New(WithLiterals("hunter2"))
		out, err := r.JSON([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output for %q: %q", in, out)
		}
		dec := json.NewDecoder(strings.NewReader(string(out)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprint(v); strings.Contains(s, "hunter2") {
			t.Fatalf("literal survived: %q -> %q", in, out)
		}
	})
}

type panicky struct{}

func (*panicky) String() string               { panic("boom") }
func (*panicky) MarshalJSON() ([]byte, error) { panic("boom") }

type nilErr struct{ msg string }

func (e *nilErr) Error() string { return e.msg }

func TestValuePanickingMethods(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		name string
		in   any
	}{
		{"marshal panics", &panicky{}},
		{"nil error pointer", error((*nilErr)(nil))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := b.r.Value(tt.in); got != Marker {
				t.Errorf("got %#v, want Marker", got)
			}
		})
	}
	var buf strings.Builder
	l := slog.New(NewHandler(slog.NewTextHandler(&buf, nil), b.r))
	l.Info("m", "err", error((*nilErr)(nil)), "s", fmt.Stringer((*panicky)(nil)))
	if !strings.Contains(buf.String(), "err=[REDACTED] s=[REDACTED]") {
		t.Errorf("got %s", buf.String())
	}
}
