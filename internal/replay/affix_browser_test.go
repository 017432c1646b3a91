package replay_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/capability"
	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/redact"
	"github.com/cuahq/cua/internal/replay"
)

// payeesPage has three payee buttons whose names start and end alike; a
// click shows which was picked, and a card shows a name with its label.
const payeesPage = `<!doctype html><title>Payees</title>
<button onclick="pick(this)">ABC</button>
<button onclick="pick(this)">ABA</button>
<button onclick="pick(this)">CBA</button>
<p id="picked">nothing picked</p>
<p>Name: Jane Roe</p>
<script>function pick(b) { document.getElementById('picked').textContent = 'picked ' + b.textContent; }</script>`

// payeeCap clicks the payee whose name starts with {input.first} and ends
// with {input.last} (NAME is the name form), then reads the card's name
// with a regex target name and a regex transform.
const payeeCap = `schema_version: 1
id: test.payee
version: 1.0.0
title: Pick the payee named by two inputs
surface: web
entrypoint:
  url_pattern: "{base_url}/"
inputs:
  - name: first
    type: string
  - name: last
    type: string
outputs:
  - name: holder
    type: string
    source: {step: read_holder}
steps:
  - id: pick
    action: click
    target: {role: button, name: NAME}
    postcondition:
      text_present: "picked "
  - id: read_holder
    action: extract
    target: {role: text, name: {value: "^Name:", match: regex}}
    into: holder
    transform: {regex: "Name: (.+)"}
checkpoint:
  when:
    text_present: {text: "picked {input.first}", match: contains}
escalation:
  triggers: [TARGET_NOT_FOUND, TARGET_AMBIGUOUS]
`

// TestStartsWithEndsWithOnChromium (issue 24 item 4): the payee whose name
// starts with "AB" and ends with "BA" is "ABA", the two overlapping. The
// starts_with/ends_with pair built from the inputs picks it; the regex a
// capability could build from the same inputs before (^AB.*BA$, inputs
// quoted) finds no such button and halts TARGET_NOT_FOUND. The run also
// reads "Name: Jane Roe" with the regex name "^Name:" and the transform
// {regex: "Name: (.+)"}, which failed while a regex name narrowed the
// text to "Name:" before the transform.
func TestStartsWithEndsWithOnChromium(t *testing.T) {
	w := newPageWorld(t, staticPage(payeesPage))
	inputs := map[string]string{"first": "AB", "last": "BA"}
	run := func(name, id string) *domain.RunRecord {
		l, err := capability.Parse(id+".yaml", []byte(strings.Replace(payeeCap, "NAME", name, 1)))
		if err != nil {
			t.Fatal(err)
		}
		sess, err := w.br.NewSession(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sess.Close() }()
		rec, err := replay.Run(t.Context(), replay.Options{Capability: l, Inputs: inputs, BaseURL: w.url, Surface: sess,
			Redactor: redact.New(), RunID: id, DataDir: t.TempDir()})
		if err != nil {
			t.Fatalf("replay %s: %v", id, err)
		}
		return rec
	}
	rec := run(`{starts_with: "{input.first}", ends_with: "{input.last}"}`, "pair")
	if rec.Status != domain.StatusSuccess || fmt.Sprint(rec.Outputs["holder"]) != "Jane Roe" {
		t.Fatalf("pair: %s (%s: %s), outputs %v; want SUCCESS holder Jane Roe", rec.Status, rec.FailureCode, rec.Message, rec.Outputs)
	}
	rec = run(`{value: "^{input.first}.*{input.last}$", match: regex}`, "regex")
	if rec.FailureCode != domain.CodeTargetNotFound || rec.Status != domain.StatusNeedsHuman {
		t.Fatalf("regex: %s (%s: %s); want NEEDS_HUMAN TARGET_NOT_FOUND (the overlap is no match)", rec.Status, rec.FailureCode, rec.Message)
	}
	rec = run(`{value: "^{input.first}", match: regex}`, "prefix")
	if rec.FailureCode != domain.CodeTargetAmbiguous {
		t.Fatalf("prefix alone: %s (%s: %s); want TARGET_AMBIGUOUS (ABC and ABA)", rec.Status, rec.FailureCode, rec.Message)
	}
}
