package redact

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Marker replaces a registered literal and the value of a credential-named
// key.
const Marker = "[REDACTED]"

// Kind names a pattern. A match is replaced by "[REDACTED:<kind>]", except
// for KindAccount, which keeps the label and the last four characters.
type Kind string

// Patterns. Text is scanned once, left to right; where several patterns
// could start at the same place the first that matches wins, and matches do
// not overlap. Literals are replaced before any pattern runs.
const (
	// KindCard: 13 to 19 digits that pass the Luhn check and start with 2–6
	// (the major networks; this keeps millisecond timestamps, which start
	// with 1, and most internal ids out), either contiguous or in groups of
	// 3 to 8 digits separated by single spaces or dashes ("4111 1111 1111
	// 1111", "3782-822463-10005"). The number must stand alone: a letter,
	// digit or underscore right before or after it, or a decimal point
	// between digits, disqualifies it, so digits inside hex hashes and
	// decimals are left alone. Limits: a Luhn-valid 13–19 digit id starting
	// with 2–6 is redacted (about one in ten such ids); cards starting with
	// 1, 7, 8 or 9 (UATP, fleet, national schemes) are missed.
	KindCard Kind = "card"
	// KindSSN: a US social security number written 123-45-6789 anywhere;
	// written as nine bare digits or 123 45 6789 only when "ssn", "social
	// security" or "soc sec" appears in the 32 bytes before it. Limits: any
	// other 3-2-4 dashed number (some part numbers) is redacted; a bare
	// nine-digit SSN without that context is missed. A 3-2-4 group that is
	// part of a longer dashed number ("1-123-45-6789") is left alone.
	KindSSN Kind = "ssn"
	// KindAccount: a label (account, acct, a/c, iban; any case, not followed
	// by a letter, then up to a few of "number", "no", "nr", "num", "id",
	// ':', '#', '.', '=', '_', '-' and blanks) and then a value of 6 to 17
	// letters and digits (up to 34 after iban) holding at least four digits.
	// The value may be in groups joined by single dashes, or by single
	// blanks when both groups are digits (after iban: groups of up to four
	// upper-case letters or digits). The label stays; the value becomes
	// "****" and its last four characters, so "Account #: 12345678" reads
	// "Account #: ****5678". Limits: unlabelled account numbers and IBANs
	// are missed; a date right after the label ("account 2024-05-01") is
	// masked as if it were a number.
	KindAccount Kind = "account"
	// KindEmail: local@domain.tld with a two-or-more-letter top-level
	// domain. Limits: "git@github.com:org/repo" style SSH remotes are
	// redacted too; addresses with quoted local parts or IP-literal domains
	// are missed.
	KindEmail Kind = "email"
	// KindKey: key-shaped tokens standing alone: sk-… (16+ characters after
	// the dash; OpenAI, Anthropic), sk_live_/sk_test_/rk_live_/rk_test_…
	// (Stripe), AKIA/ASIA followed by 16 upper-case letters or digits (AWS
	// access key ids), ghp_/gho_/ghu_/ghs_/ghr_ and github_pat_ (GitHub),
	// xoxb-/xoxa-/xoxp-/xoxr-/xoxs- (Slack).
	KindKey Kind = "key"
	// KindToken: the credential after "Bearer " (any case): 8 or more token
	// characters holding a digit or one of ._~+/=-, or 24 or more letters.
	// The word Bearer stays. Limits: a purely alphabetic token shorter than
	// 24 characters is missed, so prose such as "bearer bonds" survives.
	KindToken Kind = "token"
	// KindJWT: eyJ….eyJ….… (a JSON Web Token; the signature may be empty).
	KindJWT Kind = "jwt"
	// KindSecret: the value after a credential-named label and '=' or ':'
	// (password=…, "api_key": "…", X-Auth-Token: …, Authorization: Basic …).
	// The label is an identifier ending (after dropping case, '_', '-' and
	// '.') in password, passwd, passphrase or pwd — any non-empty value is
	// redacted up to a blank, quote, '&', ',', ';' or bracket (or the closing
	// quote when quoted); in key, token, secret, credential(s) or session
	// (api_key=, access_token=, client_secret=…) — the value is redacted
	// when it is 32 or more base64/hex/url-safe characters; in
	// authorization — the credential after the scheme; in cookie — the rest
	// of the line. The label stays. Labels after '$' ("$secret: name" is a
	// reference) and values that open a structure ('{', '[') are left alone,
	// as is the shell's PWD. The password in a URL
	// (scheme://user:password@host) is KindSecret too. Limits: a short token
	// after key=/token= (under 32 characters) is missed unless registered as
	// a literal; prose like "password: please ask" loses the word after the
	// colon; a password mentioned without a label ("the password is x") is
	// missed.
	KindSecret Kind = "secret"
)

// allKinds lists every pattern; bit i of a kindSet stands for allKinds[i].
var allKinds = [...]Kind{KindCard, KindSSN, KindAccount, KindEmail, KindKey, KindToken, KindJWT, KindSecret}

// Kinds returns every pattern kind.
func Kinds() []Kind { return slices.Clone(allKinds[:]) }

// marker returns "[REDACTED:<kind>]".
func (k Kind) marker() string {
	if m, ok := kindMarkers[k]; ok {
		return m
	}
	return "[REDACTED:" + string(k) + "]"
}

var kindMarkers = func() map[Kind]string {
	m := make(map[Kind]string, len(allKinds))
	for _, k := range allKinds {
		m[k] = "[REDACTED:" + string(k) + "]"
	}
	return m
}()

// kindSet has bit i set for allKinds[i].
type kindSet uint16

// Option configures a Redactor.
type Option func(*config)

type config struct {
	minLiteral    int
	literals      []string
	disabled      map[Kind]bool
	sensitiveKeys []string
}

// defaultMinLiteral is the shortest literal, in runes, matched by default.
const defaultMinLiteral = 3

// WithMinLiteralLength sets the shortest literal, in runes, that is matched
// (default 3). Shorter literals are still accepted by RegisterLiteral but
// never redacted. n below 1 is treated as 1.
func WithMinLiteralLength(n int) Option {
	return func(c *config) { c.minLiteral = max(n, 1) }
}

// WithLiterals registers literals at construction, as RegisterLiteral does.
func WithLiterals(lits ...string) Option {
	return func(c *config) { c.literals = append(c.literals, lits...) }
}

// WithoutPatterns turns off the given patterns (for a sink that must keep,
// say, email addresses). Literals and key-name redaction are always on.
func WithoutPatterns(kinds ...Kind) Option {
	return func(c *config) {
		for _, k := range kinds {
			c.disabled[k] = true
		}
	}
}

// WithSensitiveKeys adds key names whose values Value, JSON and the slog
// handler replace by Marker, on top of those IsSensitiveKey reports. Names
// are compared after dropping case, '_', '-', '.' and blanks.
func WithSensitiveKeys(names ...string) Option {
	return func(c *config) {
		for _, n := range names {
			c.sensitiveKeys = append(c.sensitiveKeys, normalizeKey(n))
		}
	}
}

// Redactor redacts text and data. The zero value is ready to use, with
// every pattern on and no literals, like New(). All methods are safe for
// concurrent use; a Redactor must not be copied after first use.
type Redactor struct {
	minLiteral    int
	sensitiveKeys []string

	disabled kindSet

	mu       sync.RWMutex
	literals map[string]bool // every registered literal, matched or not
	forms    map[string]bool // spellings of the matched literals
	folds    map[string]bool // folded patterns of the matched literals
	m        *matcher        // immutable; replaced on compilation
	folded   *matcher        // folded patterns (foldForms); immutable
	frags    *fragmentIndex  // immutable; replaced on compilation
	gen      atomic.Uint64   // bumped whenever the literals matched change
	// notLabels are identifiers of cua's own that are never credential
	// labels (NotLabels); replaced whole, never mutated.
	notLabels atomic.Pointer[map[string]bool]
	// pending holds what registration added since the automata were last
	// compiled; the next redaction compiles it.
	pending struct{ exact, folded, long []string }
}

// New returns a Redactor with every pattern on and the given literals
// registered.
func New(opts ...Option) *Redactor {
	c := config{disabled: map[Kind]bool{}}
	for _, o := range opts {
		o(&c)
	}
	r := &Redactor{
		minLiteral:    c.minLiteral,
		sensitiveKeys: c.sensitiveKeys,
	}
	for i, k := range allKinds {
		if c.disabled[k] {
			r.disabled |= 1 << i
		}
	}
	r.register(c.literals...)
	r.compile()
	return r
}

// ownFields are fields of cua's own records whose names end like a
// credential label: their values are never secrets ("idempotency_key:
// nightly-42" names a job key).
var ownFields = []string{"idempotency_key", "IdempotencyKey"}

// NotLabels names identifiers of cua's own, a capability's step ids and
// outcome codes, that the credential-label pattern must never read as a
// label: with the step id enter_password, "step enter_password: dispatch
// type: timeout" keeps what follows the colon, where a page's
// "password: hunter2" is still redacted. Names compare as written. The
// fields of cua's own records (idempotency_key) are never labels either.
func (r *Redactor) NotLabels(names ...string) {
	for {
		old := r.notLabels.Load()
		next := map[string]bool{}
		if old != nil {
			for k := range *old {
				next[k] = true
			}
		}
		for _, n := range names {
			next[n] = true
		}
		if r.notLabels.CompareAndSwap(old, &next) {
			return
		}
	}
}

// isNotLabel reports whether ident is one of cua's own identifiers.
func (r *Redactor) isNotLabel(ident string) bool {
	if slices.Contains(ownFields, ident) {
		return true
	}
	m := r.notLabels.Load()
	return m != nil && (*m)[ident]
}

// RegisterLiteral records a secret value. Every later call of any method
// replaces with Marker each occurrence of s, whatever its length:
//
//   - as written, URL-encoded, JSON-escaped and HTML-escaped;
//   - folded: compared after folding case and dropping whitespace
//     ("op1001", "O P 1 0 0 1" for OP1001);
//   - encoded: base64 (standard or URL alphabet, padded or not, alone or
//     inside a longer encoded value such as a Basic credential), hex and
//     every byte percent-encoded (any case, see encodedForms);
//   - cut: when s is CutMinLen (8) folded runes or longer, with up to two
//     characters cut from its ends in all; when it is ShortCutMinLen (6)
//     or 7, with one cut from either end if what is left holds a letter
//     and a digit ("OP100");
//   - in fragments: when s is FragmentLen (12) runes or longer, every run
//     of 12 or more of its folded runes (a secret the page truncated).
//
// A folded match that spans whitespace counts only when no letter or
// digit touches it, so "stop 1001" is not OP1001. A literal shorter than
// the minimum length (3 runes by default) is recorded but not matched.
// Registering the same literal twice is harmless.
//
// Registration is cheap; the next redaction recompiles the newest part of
// the literal automata (at most a few hundred literals, a few milliseconds),
// however many literals came before, once for every literal registered
// since the last. Redaction in progress on other goroutines finishes with
// the automata it started with.
func (r *Redactor) RegisterLiteral(s string) { r.register(s) }

func (r *Redactor) register(lits ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.literals == nil {
		r.literals, r.forms, r.folds = map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
	minLen := r.minLiteral
	if minLen == 0 {
		minLen = defaultMinLiteral
	}
	added, folded, long := r.pending.exact, r.pending.folded, r.pending.long
	n := len(added) + len(folded)
	for _, s := range lits {
		if s == "" || r.literals[s] {
			continue
		}
		r.literals[s] = true
		if utf8.RuneCountInString(s) < minLen {
			continue
		}
		long = append(long, s)
		exact, enc := encodedForms(s)
		for _, f := range append(literalForms(s), exact...) {
			if !r.forms[f] {
				r.forms[f] = true
				added = append(added, f)
			}
		}
		var folds []string
		if n := normalizeFragment(s); len(n) >= minLen {
			folds = foldForms(n)
		}
		for _, f := range append(folds, enc...) {
			if !r.folds[f] {
				r.folds[f] = true
				folded = append(folded, f)
			}
		}
	}
	r.pending.exact, r.pending.folded, r.pending.long = added, folded, long
	if len(added)+len(folded) > n {
		r.gen.Add(1)
	}
}

// compile builds the automata of the pending literals and returns the
// current ones.
func (r *Redactor) compile() (*matcher, *matcher, *fragmentIndex) {
	r.mu.RLock()
	m, folded, frags := r.m, r.folded, r.frags
	dirty := len(r.pending.exact)+len(r.pending.folded) > 0
	r.mu.RUnlock()
	if !dirty {
		return m, folded, frags
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.pending; len(p.exact)+len(p.folded) > 0 {
		if len(p.exact) > 0 {
			r.m = r.m.with(p.exact)
		}
		if len(p.folded) > 0 {
			r.folded = r.folded.with(p.folded)
		}
		r.frags = r.frags.with(p.long)
		r.pending.exact, r.pending.folded, r.pending.long = nil, nil, nil
	}
	return r.m, r.folded, r.frags
}

// generation changes whenever the set of matched literals does.
func (r *Redactor) generation() uint64 { return r.gen.Load() }

// literalIntervals returns the sorted, disjoint byte ranges of s that
// hold a registered literal: one of its spellings (literalForms,
// encodedForms), a folded whole or cut (foldForms) or a fragment.
func (r *Redactor) literalIntervals(s string) []interval {
	m, folded, frags := r.compile()
	return mergeIntervals(mergeIntervals(m.find(s), folded.findFolded(s)), frags.find(s))
}

// String returns s with every registered literal replaced by Marker and
// every enabled pattern by its typed marker. Literals are replaced first, so
// a pattern never reveals part of a literal.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	s = r.literalPass(s)
	return r.patternPass(s)
}

// Bytes is String for a byte slice. It returns b itself when nothing was
// redacted, and a new slice otherwise.
func (r *Redactor) Bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	in := string(b)
	out := r.String(in)
	if out == in {
		return b
	}
	return []byte(out)
}

func (r *Redactor) literalPass(s string) string {
	ivs := r.literalIntervals(s)
	if len(ivs) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, iv := range ivs {
		b.WriteString(s[last:iv.start])
		b.WriteString(Marker)
		last = iv.end
	}
	b.WriteString(s[last:])
	return b.String()
}

func (r *Redactor) patternPass(s string) string {
	spans := r.scan(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(sp.repl)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}
