package redact

import "strings"

// Bits of kindSet, in the order of allKinds.
const (
	bitCard kindSet = 1 << iota
	bitSSN
	bitAccount
	bitEmail
	bitKey
	bitToken
	bitJWT
	bitSecret
)

// span is a byte range of the scanned text and what replaces it.
type span struct {
	start, end int
	repl       string
}

// Character classes.
const (
	clDigit uint8 = 1 << iota
	clUpper
	clLower
	clUnder
)

var classes = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = clDigit
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clUpper
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clLower
	}
	t['_'] = clUnder
	return t
}()

func isDigit(c byte) bool { return classes[c]&clDigit != 0 }
func isAlpha(c byte) bool { return classes[c]&(clUpper|clLower) != 0 }
func isAlnum(c byte) bool { return classes[c]&(clDigit|clUpper|clLower) != 0 }
func isWord(c byte) bool  { return classes[c] != 0 }

func lower(c byte) byte {
	if classes[c]&clUpper != 0 {
		return c + 'a' - 'A'
	}
	return c
}

// hasFold reports whether s[i:] starts with w (lower-case ASCII), ignoring
// case.
func hasFold(s string, i int, w string) bool {
	if len(s)-i < len(w) {
		return false
	}
	for k := 0; k < len(w); k++ {
		if lower(s[i+k]) != w[k] {
			return false
		}
	}
	return true
}

// run returns the end of the run of bytes satisfying ok that starts at i.
func run(s string, i int, ok func(byte) bool) int {
	for i < len(s) && ok(s[i]) {
		i++
	}
	return i
}

// scan finds every enabled pattern in s, left to right, without overlaps.
func (r *Redactor) scan(s string) []span {
	on := ^r.disabled
	var spans []span
	floor := 0 // end of the last span
	for i := 0; i < len(s); {
		c := s[i]
		var sp span
		ok := false
		switch {
		case isWord(c):
			if i == 0 || !isWord(s[i-1]) {
				sp, ok = wordStart(s, i, on)
			}
			if !ok {
				// No pattern starts inside a word: skip the rest of it.
				i = run(s, i+1, isWord)
				continue
			}
		case c == '@':
			sp, ok = at(s, i, floor, on)
		case c == '=' || c == ':':
			if on&bitSecret != 0 {
				sp, ok = labelValue(s, i, r.isNotLabel)
			}
		}
		if ok {
			spans = append(spans, sp)
			floor = sp.end
			i = sp.end
			continue
		}
		i++
	}
	return spans
}

// wordStart tries the patterns that begin a word at s[i].
func wordStart(s string, i int, on kindSet) (span, bool) {
	c := s[i]
	if isDigit(c) {
		return number(s, i, on)
	}
	switch lower(c) {
	case 'a':
		if on&bitKey != 0 && (strings.HasPrefix(s[i:], "AKIA") || strings.HasPrefix(s[i:], "ASIA")) {
			e := run(s, i+4, func(b byte) bool { return classes[b]&(clDigit|clUpper) != 0 })
			if e-i == 20 && (e == len(s) || !isAlnum(s[e])) {
				return span{i, e, KindKey.marker()}, true
			}
		}
		if on&bitAccount != 0 {
			for _, l := range accountLabels {
				if hasFold(s, i, l) {
					return account(s, i, i+len(l), false)
				}
			}
		}
	case 'i':
		if on&bitAccount != 0 && hasFold(s, i, "iban") {
			return account(s, i, i+4, true)
		}
	case 's', 'r':
		if on&bitKey == 0 {
			break
		}
		if c == 's' && strings.HasPrefix(s[i:], "sk-") {
			return token(s, i, i+3, 16, isKeyByte, KindKey)
		}
		for _, p := range stripePrefixes {
			if strings.HasPrefix(s[i:], p) {
				return token(s, i, i+len(p), 10, isAlnum, KindKey)
			}
		}
	case 'g':
		if on&bitKey == 0 || c != 'g' {
			break
		}
		if strings.HasPrefix(s[i:], "github_pat_") {
			return token(s, i, i+11, 20, isWord, KindKey)
		}
		if len(s)-i > 4 && s[i+1] == 'h' && s[i+3] == '_' && strings.IndexByte("opusr", s[i+2]) >= 0 {
			return token(s, i, i+4, 20, isAlnum, KindKey)
		}
	case 'x':
		if on&bitKey != 0 && strings.HasPrefix(s[i:], "xox") && len(s)-i > 4 &&
			strings.IndexByte("baprs", s[i+3]) >= 0 && s[i+4] == '-' {
			return token(s, i, i+5, 10, func(b byte) bool { return isAlnum(b) || b == '-' }, KindKey)
		}
	case 'b':
		if on&bitToken != 0 && hasFold(s, i, "bearer") {
			return bearer(s, i+6)
		}
	case 'e':
		if on&bitJWT != 0 && strings.HasPrefix(s[i:], "eyJ") {
			return jwt(s, i)
		}
	}
	return span{}, false
}

var (
	accountLabels  = []string{"account", "acct", "a/c"}
	accountFiller  = []string{"number", "num", "nr", "no", "id"}
	stripePrefixes = []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"}
	ssnCues        = []string{"social security", "soc sec", "soc. sec"}
)

func isKeyByte(b byte) bool { return isWord(b) || b == '-' }

// token matches prefix (s[start:body]) followed by at least minBody bytes
// satisfying ok, and no more word bytes.
func token(s string, start, body, minBody int, ok func(byte) bool, k Kind) (span, bool) {
	e := run(s, body, ok)
	if e-body < minBody || (e < len(s) && isAlnum(s[e])) {
		return span{}, false
	}
	return span{start, e, k.marker()}, true
}

func isTokenByte(b byte) bool { return isWord(b) || strings.IndexByte(".~+/=-", b) >= 0 }

// bearer matches the credential after the word "Bearer" ending at i.
func bearer(s string, i int) (span, bool) {
	j := run(s, i, func(b byte) bool { return b == ' ' || b == '\t' })
	if j == i || j-i > 4 {
		return span{}, false
	}
	e := run(s, j, isTokenByte)
	tok := s[j:e]
	if len(tok) < 8 {
		return span{}, false
	}
	if len(tok) < 24 && strings.IndexFunc(tok, func(r rune) bool { return r < 'A' || r > 'z' || (r > 'Z' && r < 'a') }) < 0 {
		return span{}, false // a word, not a token
	}
	return span{j, e, KindToken.marker()}, true
}

func isB64URL(b byte) bool { return isWord(b) || b == '-' }

// jwt matches eyJ….eyJ….sig at i.
func jwt(s string, i int) (span, bool) {
	if i > 0 && (s[i-1] == '-' || s[i-1] == '.') {
		return span{}, false // inside a longer base64url run
	}
	e := run(s, i+3, isB64URL)
	if e >= len(s) || s[e] != '.' || !strings.HasPrefix(s[e+1:], "eyJ") {
		return span{}, false
	}
	e = run(s, e+4, isB64URL)
	if e >= len(s) || s[e] != '.' {
		return span{}, false
	}
	e = run(s, e+1, isB64URL)
	return span{i, e, KindJWT.marker()}, true
}

// account matches a label s[i:j] followed by an account number. The label
// and the filler after it stay; the number becomes "****" and its last four
// characters.
func account(s string, i, j int, iban bool) (span, bool) {
	if j < len(s) && isAlpha(s[j]) {
		return span{}, false // "accounting"
	}
	// Filler: blanks and punctuation, and the words number/num/no/nr/id.
	for k := 0; k < 4 && j-i < 48; k++ {
		j0 := j
		j = run(s, j, func(b byte) bool { return strings.IndexByte(" \t:#.=_-", b) >= 0 })
		for _, w := range accountFiller {
			if hasFold(s, j, w) && (j+len(w) == len(s) || !isAlnum(s[j+len(w)])) {
				j += len(w)
				break
			}
		}
		if j == j0 {
			break
		}
	}
	maxLen := 17
	if iban {
		maxLen = 34
	}
	start, end := j, j
	alnum, digits := 0, 0
	prevDigits := true
	var tail []byte
	for k := j; ; {
		g := run(s, k, isAlnum)
		if g == k {
			break
		}
		grp := s[k:g]
		allDigits := run(grp, 0, isDigit) == len(grp)
		if k > start {
			sep := s[k-1]
			upper := run(grp, 0, func(b byte) bool { return classes[b]&(clDigit|clUpper) != 0 }) == len(grp)
			if sep == ' ' && !(iban && upper && len(grp) <= 4) && !(allDigits && prevDigits) {
				break
			}
		}
		alnum += len(grp)
		if alnum > maxLen {
			return span{}, false
		}
		for x := 0; x < len(grp); x++ {
			if isDigit(grp[x]) {
				digits++
			}
		}
		tail = append(tail, grp...)
		end, prevDigits = g, allDigits
		if g+1 < len(s) && (s[g] == '-' || s[g] == ' ') && isAlnum(s[g+1]) {
			k = g + 1
			continue
		}
		break
	}
	if alnum < 6 || digits < 4 || (end < len(s) && s[end] == '_') {
		return span{}, false
	}
	return span{start, end, "****" + string(tail[len(tail)-4:])}, true
}

// number tries the patterns that start with the digit s[i].
func number(s string, i int, on kindSet) (span, bool) {
	// A digit after "1." or "1," continues a number; leave it alone.
	if i >= 2 && (s[i-1] == '.' || s[i-1] == ',') && isDigit(s[i-2]) {
		return span{}, false
	}
	if on&bitSSN != 0 {
		if e, ok := ssn(s, i); ok {
			return span{i, e, KindSSN.marker()}, true
		}
	}
	if on&bitCard != 0 {
		if e, ok := card(s, i); ok {
			return span{i, e, KindCard.marker()}, true
		}
	}
	return span{}, false
}

// numberEnds reports whether a number may end at e: the text ends, or the
// next byte is neither a word byte nor a decimal point or dash followed by a
// digit.
func numberEnds(s string, e int) bool {
	if e >= len(s) {
		return true
	}
	if isWord(s[e]) {
		return false
	}
	return !(strings.IndexByte(".,-", s[e]) >= 0 && e+1 < len(s) && isDigit(s[e+1]))
}

// digitsAt reports whether s[i:i+n] are all digits.
func digitsAt(s string, i, n int) bool {
	return i+n <= len(s) && run(s[:i+n], i, isDigit) == i+n
}

// ssn matches a social security number at i and returns its end.
func ssn(s string, i int) (int, bool) {
	if i >= 2 && s[i-1] == '-' && isDigit(s[i-2]) {
		return 0, false // the tail of a longer dashed number
	}
	if digitsAt(s, i, 3) && i+3 < len(s) {
		sep := s[i+3]
		if (sep == '-' || sep == ' ') && digitsAt(s, i+4, 2) && i+6 < len(s) && s[i+6] == sep && digitsAt(s, i+7, 4) && numberEnds(s, i+11) {
			if sep == '-' || ssnContext(s, i) {
				return i + 11, true
			}
		}
	}
	if digitsAt(s, i, 9) && numberEnds(s, i+9) && ssnContext(s, i) {
		return i + 9, true
	}
	return 0, false
}

// ssnContext reports whether the 32 bytes before i name a social security
// number.
func ssnContext(s string, i int) bool {
	w := strings.ToLower(s[max(0, i-32):i])
	for _, cue := range ssnCues {
		if strings.Contains(w, cue) {
			return true
		}
	}
	for off := 0; ; {
		k := strings.Index(w[off:], "ssn")
		if k < 0 {
			return false
		}
		k += off
		if (k == 0 || !isAlpha(w[k-1])) && (k+3 == len(w) || !isAlpha(w[k+3])) {
			return true
		}
		off = k + 1
	}
}

// card matches a payment card number at i and returns its end: 13–19
// digits, contiguous or in groups of 3–8 separated by one space or dash,
// starting with 2–6 and passing the Luhn check. When grouped digits run on
// past a valid number, the longest valid prefix of whole groups wins.
func card(s string, i int) (int, bool) {
	if s[i] < '2' || s[i] > '6' {
		return 0, false
	}
	var ends, counts [8]int
	n, digits := 0, 0
	for j := i; n < len(ends); {
		k := j
		for k < len(s) && isDigit(s[k]) && k-j <= 19 {
			k++
		}
		l := k - j
		if n == 0 && l >= 13 {
			if l <= 19 {
				ends[0], counts[0], n = k, l, 1
			}
			break
		}
		if l < 3 || l > 8 || digits+l > 19 {
			break
		}
		digits += l
		ends[n], counts[n] = k, digits
		n++
		if k+1 < len(s) && (s[k] == ' ' || s[k] == '-') && isDigit(s[k+1]) {
			j = k + 1
			continue
		}
		break
	}
	for g := n - 1; g >= 0 && counts[g] >= 13; g-- {
		e := ends[g]
		// Inside a chain of groups the next byte is a separator, which is a
		// fine place for a number to end.
		if (g < n-1 || numberEnds(s, e)) && luhn(s[i:e]) {
			return e, true
		}
	}
	return 0, false
}

// luhn reports whether the digits of s (other bytes ignored) pass the Luhn
// check.
func luhn(s string) bool {
	sum, double := 0, false
	for k := len(s) - 1; k >= 0; k-- {
		if !isDigit(s[k]) {
			continue
		}
		d := int(s[k] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// at tries the patterns around an '@' at i: credentials in a URL
// (scheme://user:password@host), then an email address. floor is the end of
// the previous span; nothing before it may be matched again.
func at(s string, i, floor int, on kindSet) (span, bool) {
	if on&bitSecret != 0 {
		k := i
		for k > floor && i-k < 256 && strings.IndexByte(" \t\r\n/\"'<>@", s[k-1]) < 0 {
			k--
		}
		if k >= 3 && k-3 >= floor && s[k-3:k] == "://" {
			if c := strings.IndexByte(s[k:i], ':'); c >= 0 && k+c+1 < i && !strings.HasPrefix(s[k+c+1:], Marker) {
				return span{k + c + 1, i, KindSecret.marker()}, true
			}
		}
	}
	if on&bitEmail == 0 {
		return span{}, false
	}
	a := i
	for a > floor && i-a < 64 && isLocalByte(s[a-1]) {
		a--
	}
	for a < i && s[a] == '.' {
		a++
	}
	if a == i {
		return span{}, false
	}
	e := i + 1
	for e < len(s) && e-i <= 255 && (isAlnum(s[e]) || s[e] == '.' || s[e] == '-') {
		e++
	}
	for e > i+1 && (s[e-1] == '.' || s[e-1] == '-') {
		e--
	}
	dot := strings.LastIndexByte(s[i+1:e], '.')
	if dot <= 0 {
		return span{}, false
	}
	tld := s[i+2+dot : e]
	if len(tld) < 2 || run(tld, 0, isAlpha) != len(tld) || s[i+dot] == '.' {
		return span{}, false
	}
	return span{a, e, KindEmail.marker()}, true
}

func isLocalByte(b byte) bool { return isWord(b) || strings.IndexByte(".%+-", b) >= 0 }

// Label classes for labelValue.
type labelClass int

const (
	labelNone labelClass = iota
	labelPassword
	labelKey
	labelAuth
	labelCookie
)

// Label suffixes for classifyLabel.
var (
	passwordLabels = []string{"password", "passwd", "passphrase", "pwd"}
	keyLabels      = []string{"key", "token", "secret", "credential", "credentials", "session", "sessionid"}
)

// classifyLabel names what a text label such as "api_key" (at most 64
// bytes) introduces.
func classifyLabel(ident string) labelClass {
	var buf [64]byte
	n := buf[:0]
	for i := 0; i < len(ident) && len(n) < len(buf); i++ {
		if c := ident[i]; c != '_' && c != '-' && c != '.' {
			n = append(n, lower(c))
		}
	}
	has := func(sufs []string) bool {
		for _, x := range sufs {
			if len(n) >= len(x) && string(n[len(n)-len(x):]) == x {
				return true
			}
		}
		return false
	}
	switch {
	case string(n) == "pwd" || string(n) == "oldpwd": // the shell's working directory
		return labelNone
	case has(passwordLabels):
		return labelPassword
	case has(authLabels):
		return labelAuth
	case has(cookieLabels):
		return labelCookie
	case has(keyLabels):
		return labelKey
	}
	return labelNone
}

var (
	authLabels   = []string{"authorization"}
	cookieLabels = []string{"cookie"}
)

func isIdentByte(b byte) bool { return isWord(b) || b == '-' || b == '.' }

// labelValue matches the value after a credential label ending just before
// the '=' or ':' at i, unless own says the label is one of cua's own
// identifiers.
func labelValue(s string, i int, own func(string) bool) (span, bool) {
	j := i
	for j > 0 && i-j < 3 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
		if j > 0 && s[j-1] == '\\' {
			j--
		}
	}
	e := j
	for j > 0 && e-j < 64 && isIdentByte(s[j-1]) {
		j--
	}
	if j == e || (j > 0 && s[j-1] == '$') { // "$secret: ref" names a secret
		return span{}, false
	}
	class := classifyLabel(s[j:e])
	if class == labelNone || own(s[j:e]) {
		return span{}, false
	}
	v := i + 1
	for v < len(s) && v-i <= 4 && (s[v] == ' ' || s[v] == '\t') {
		v++
	}
	var quote string
	switch {
	case strings.HasPrefix(s[v:], `\"`):
		quote, v = `\"`, v+2
	case v < len(s) && (s[v] == '"' || s[v] == '\''):
		quote, v = s[v:v+1], v+1
	}
	if strings.HasPrefix(s[v:], "[REDACTED") || (v < len(s) && (s[v] == '{' || s[v] == '[')) {
		return span{}, false // already redacted, or a structure ("{$secret: ref}")
	}
	// upTo returns the end of the value: the closing quote if quoted, else
	// the first byte in stop; never past a line end or 4 KiB.
	upTo := func(from int, stop string) int {
		limit := min(len(s), from+4096)
		for k := from; k < limit; k++ {
			c := s[k]
			if c == '\n' || c == '\r' {
				return k
			}
			if quote == `"` && c == '\\' {
				k++ // an escaped quote does not end the value
				continue
			}
			if quote != "" && strings.HasPrefix(s[k:], quote) {
				return k
			}
			if quote == "" && strings.IndexByte(stop, c) >= 0 {
				return k
			}
			if quote == `\"` && c == '"' {
				return k
			}
		}
		return limit
	}
	var end int
	switch class {
	case labelPassword:
		end = upTo(v, " \t\"'&,;)]}<>")
	case labelCookie:
		end = upTo(v, "\"'")
	case labelKey:
		end = run(s, v, func(b byte) bool { return isAlnum(b) || strings.IndexByte("+/=_.~-", b) >= 0 })
		if end-v < 32 {
			return span{}, false
		}
	case labelAuth:
		// "Basic xyz", "Bearer xyz": keep the scheme. "Digest …" and other
		// multi-part schemes lose everything after the scheme.
		sch := run(s, v, isAlpha)
		if sch > v && sch < len(s) && s[sch] == ' ' {
			c := run(s, sch, func(b byte) bool { return b == ' ' })
			if c < len(s) && s[c] != '\n' && s[c] != '\r' {
				stop := " \t\"',;"
				if hasFold(s, v, "digest") {
					stop = "\"'"
				}
				end = upTo(c, stop)
				if strings.HasPrefix(s[c:], "[REDACTED") {
					return span{}, false
				}
				if end > c {
					return span{c, end, KindSecret.marker()}, true
				}
			}
		}
		end = upTo(v, " \t\"',;")
	}
	if end <= v {
		return span{}, false
	}
	return span{v, end, KindSecret.marker()}, true
}

// normalizeKey lower-cases name and drops '_', '-', '.' and blanks.
func normalizeKey(name string) string {
	plain := true
	for i := 0; i < len(name) && plain; i++ {
		plain = classes[name[i]]&(clLower|clDigit) != 0
	}
	if plain {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch c {
		case '_', '-', '.', ' ', '\t':
			continue
		}
		b.WriteByte(lower(c))
	}
	return b.String()
}
