// Command explorer is a scripted, deterministic discovery provider for the
// MemberDesk mock app, used through `cua discover --model exec:...` to make
// the checked-in cassette without a model key. It reads one model request
// (JSON) on stdin and writes one turn on stdout, choosing from what the
// numbered element list shows: sign on with the secrets, open member
// search, type the member number from the goal, search, read the savings
// balance, status and as-of date, and finish (or report member_not_found).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

type request struct {
	Goal        string   `json:"goal"`
	Context     []string `json:"context"`
	Observation string   `json:"observation"`
	Purpose     string   `json:"purpose"`
}

type element struct {
	num               int
	role, name, value string
	frame             string
}

var line = regexp.MustCompile(`^\[(\d+)\] (\S+) "((?:[^"\\]|\\.)*)"(.*)$`)
var attr = regexp.MustCompile(`(value|frame)=("(?:[^"\\]|\\.)*"|\S+)`)

func parse(obs string) []element {
	var out []element
	for _, l := range strings.Split(obs, "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		name, _ := strconv.Unquote(`"` + m[3] + `"`)
		e := element{num: n, role: m[2], name: name}
		for _, a := range attr.FindAllStringSubmatch(m[4], -1) {
			v := a[2]
			if strings.HasPrefix(v, `"`) {
				v, _ = strconv.Unquote(v)
			}
			if a[1] == "value" {
				e.value = v
			} else {
				e.frame = v
			}
		}
		out = append(out, e)
	}
	return out
}

func find(els []element, role, name, frame string) *element {
	for i := range els {
		e := &els[i]
		if e.role == role && e.name == name && (frame == "" || e.frame == frame) {
			return e
		}
	}
	return nil
}

type turn map[string]any

func base(action, thought string) turn {
	t := turn{"thought": thought, "action": action}
	for _, k := range []string{"element", "text", "secret", "input", "key", "url", "into", "code", "claim", "reason", "expect"} {
		t[k] = nil
	}
	return t
}

func decide(r request) turn {
	if r.Purpose == "audit" {
		return turn{"verdict": "confirmed", "reason": "the member record with the requested values is on screen"}
	}
	els := parse(r.Observation)
	history := strings.Join(r.Context, "\n")
	if e := find(els, "status", "Member not found", "content"); e != nil {
		t := base("outcome", "The application says the member does not exist.")
		t["element"], t["code"] = e.num, "member_not_found"
		return t
	}
	if e := find(els, "textbox", "Operator ID", "content"); e != nil && e.value == "" {
		t := base("type", "Sign on first: the operator id.")
		t["element"], t["secret"] = e.num, "corebank_operator"
		t["expect"] = map[string]any{"kind": "value_is", "text": nil}
		return t
	}
	if e := find(els, "textbox", "Password", "content"); e != nil && e.value == "" {
		t := base("type", "Sign on: the password.")
		t["element"], t["secret"] = e.num, "corebank_password"
		return t
	}
	if e := find(els, "button", "Sign on", "content"); e != nil {
		t := base("click", "Submit the sign-on form.")
		t["element"] = e.num
		t["expect"] = map[string]any{"kind": "text_appears", "text": "Welcome"}
		return t
	}
	if h := find(els, "heading", "Member Details", "content"); h != nil {
		for _, want := range []struct{ label, into string }{{"Savings Balance", "savings_balance"}, {"Status", "status"}, {"As of", "as_of"}} {
			if strings.Contains(history, "into "+want.into) {
				continue
			}
			for i, e := range els {
				if e.role == "cell" && e.name == want.label && i+1 < len(els) && els[i+1].role == "cell" {
					t := base("extract", "Read "+want.label+".")
					t["element"], t["into"] = els[i+1].num, want.into
					return t
				}
			}
		}
		t := base("finish", "All three values are read.")
		t["element"], t["claim"] = h.num, "The member details page shows the savings balance, status and as-of date."
		return t
	}
	if e := find(els, "textbox", "Member number", "content"); e != nil {
		if e.value == "" {
			member := regexp.MustCompile(`\b[0-9]{5}\b`).FindString(r.Goal)
			if member == "" {
				t := base("give_up", "The goal names no five-digit member number.")
				t["reason"] = "no member number in the goal"
				return t
			}
			t := base("type", "Type the member number from the goal.")
			t["element"], t["text"], t["input"] = e.num, member, "member_id"
			t["expect"] = map[string]any{"kind": "value_is", "text": member}
			return t
		}
		if b := find(els, "button", "Search", "content"); b != nil {
			t := base("click", "Run the search.")
			t["element"] = b.num
			t["expect"] = map[string]any{"kind": "text_appears", "text": "Member Details"}
			return t
		}
	}
	if e := find(els, "link", "Member Search", "nav"); e != nil {
		t := base("click", "Open member search from the navigation.")
		t["element"] = e.num
		t["expect"] = map[string]any{"kind": "element_appears", "text": "Member number"}
		return t
	}
	t := base("give_up", "Nothing I know how to use is on screen.")
	t["reason"] = "unknown screen"
	return t
}

func main() {
	var r request
	if err := json.NewDecoder(os.Stdin).Decode(&r); err != nil {
		fmt.Fprintln(os.Stderr, "explorer: read request:", err)
		os.Exit(2)
	}
	t := decide(r)
	body, _ := json.Marshal(t)
	in, _ := json.Marshal(r)
	out := map[string]any{
		"turn":  json.RawMessage(body),
		"usage": map[string]int{"input_tokens": (len(in) + 3) / 4, "output_tokens": (len(body) + 3) / 4},
		"model": "scripted-explorer",
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(2)
	}
}
