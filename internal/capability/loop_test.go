package capability

import (
	"errors"
	"strings"
	"testing"

	"github.com/cuahq/cua/internal/domain"
)

const loopBase = "testdata/loop/checklist.yaml"

// TestLoopCapabilityValid parses the reference loop capability: the loop
// keeps its inner steps (defaults applied to them) and hashes them.
func TestLoopCapabilityValid(t *testing.T) {
	t.Parallel()
	l, err := Load(loopBase)
	if err != nil {
		t.Fatal(err)
	}
	c := l.Capability
	fe := c.Step("tick_each").ForEach
	if fe == nil || fe.Input != "items" || len(fe.Steps) != 2 {
		t.Fatalf("loop not kept: %+v", c.Step("tick_each"))
	}
	if fe.Steps[1].Risk != domain.RiskSafe || fe.Steps[0].Target.Name.Match != domain.MatchExact {
		t.Errorf("defaults not applied inside the loop: %+v", fe.Steps[1])
	}
	if got := c.StepCount(); got != 1+5*2+3 {
		t.Errorf("StepCount = %d, want 14", got)
	}
	data := mustRead(t, loopBase)
	other, err := Parse("x.yaml", []byte(strings.Replace(data, `name: "{item}"}
          postcondition`, `name: "{item} "}
          postcondition`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if h1, h2 := mustHash(t, c), mustHash(t, other.Capability); h1 == h2 {
		t.Error("a change inside a loop does not change the content hash")
	}
}

func mustHash(t *testing.T, c *domain.Capability) string {
	t.Helper()
	h, err := Hash(c)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestLoopValidation refuses what would make a loop unbounded or wrong,
// naming the field.
func TestLoopValidation(t *testing.T) {
	t.Parallel()
	base := mustRead(t, loopBase)
	cases := []struct {
		name, old, new, path, msg string
	}{
		{"max_items missing", "    max_items: 5\n", "", "inputs[0].max_items", "needs max_items"},
		{"max_items too big", "max_items: 5\n", "max_items: 500\n", "inputs[0].max_items", "maximum"},
		{"max_steps too small", "max_steps: 30", "max_steps: 12", "policy.max_steps", "does not cover the loops: a run may take 14 steps"},
		{"default max_steps too small", "    max_items: 5\n", "    max_items: 60\n", "policy.max_steps", "does not cover"},
		{"unknown item field", "{row.name}", "{row.nam}", "steps[2].for_each.steps[0].target.name.value", `unknown item field "nam"`},
		{"unknown $item field", "row.qty}", "row.size}", "steps[2].for_each.steps[0].value.$item", `unknown item field "size"`},
		{"field of a string", `"{item}"}
          postcondition`, `"{item.name}"}
          postcondition`, "steps[1].for_each.steps[0].target.name.value", "they have no field name"},
		{"whole object", "{row.name}", "{row}", "steps[2].for_each.steps[0].target.name.value", "are objects: name a field"},
		{"nested loop", "        - id: read\n", "        - id: inner\n          for_each: {input: items, as: x, steps: [{id: a, action: reload}]}\n        - id: read\n", "steps[1].for_each.steps[1].for_each", "loops do not nest"},
		{"loop over a scalar", "      input: rows\n", "      input: missing\n", "steps[2].for_each.input", `undeclared input "missing"`},
		{"action on the loop", "  - id: qty_each\n", "  - id: qty_each\n    action: click\n", "steps[2]", "sets only id, description and for_each"},
		{"inner step checked", "          into: statuses\n", "", "steps[1].for_each.steps[1].into", "required for action extract"},
		{"scalar output from a loop", "    type: array\n    source", "    type: string\n    source", "outputs[0].type", "declare it type array"},
		{"list typed whole", "    action: assert\n    postcondition: {node_exists: {role: heading, name: Checklist}}", "    action: type\n    target: {role: textbox}\n    value: {$input: items}", "steps[0].value.$input", "is a list"},
		{"sensitive list", "    min_items: 1\n", "    min_items: 1\n    sensitive: true\n", "inputs[0].sensitive", "cannot be sensitive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(base, tc.old) {
				t.Fatalf("base lacks %q", tc.old)
			}
			_, err := Parse("loop.yaml", []byte(strings.Replace(base, tc.old, tc.new, 1)))
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("want *InvalidError, got %v", err)
			}
			for _, p := range inv.Problems {
				if p.Path == tc.path && strings.Contains(p.Message, tc.msg) {
					if p.Line <= 0 {
						t.Errorf("no line: %+v", p)
					}
					return
				}
			}
			t.Errorf("no problem at %q containing %q; got:\n%v", tc.path, tc.msg, err)
		})
	}
}

// TestBindListInputs checks list values as they arrive (JSON text) and
// the expansion of each loop per element.
func TestBindListInputs(t *testing.T) {
	t.Parallel()
	l, err := Load(loopBase)
	if err != nil {
		t.Fatal(err)
	}
	c := l.Capability
	for raw, want := range map[string]string{
		`Alpha`:                     "items: not a JSON array",
		`[]`:                        "fewer than min_items 1",
		`["a","b","c","d","e","f"]`: "more than max_items 5",
		`["a",2]`:                   "item 1: not a string",
		`["a"] x`:                   "text after the JSON array",
	} {
		_, err := BindInputs(c, map[string]string{"items": raw})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("items=%s: got %v, want %q", raw, err, want)
		}
	}
	_, err = BindInputs(c, map[string]string{"items": `["a"]`, "rows": `[{"name":"A","qty":"0"}]`})
	if err == nil || !strings.Contains(err.Error(), "rows: item 0: field qty: less than 1") {
		t.Errorf("qty 0: %v", err)
	}
	_, err = BindInputs(c, map[string]string{"items": `["a"]`, "rows": `[{"name":"A","qty":2,"colour":"red"}]`})
	if err == nil || !strings.Contains(err.Error(), `unknown field "colour"`) {
		t.Errorf("unknown field: %v", err)
	}
	in, err := BindInputs(c, map[string]string{"items": `["Milk (2%)","Eggs"]`, "rows": `[{"name":"Nuts","qty":3}]`})
	if err != nil {
		t.Fatal(err)
	}
	x, err := ExpandLoops(c, in)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range x.Steps {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, " "); got != "heading tick_each[0].tick tick_each[0].read tick_each[1].tick tick_each[1].read qty_each[0].qty" {
		t.Fatalf("expanded ids: %s", got)
	}
	if n := x.Steps[1].Target.Name.Value; n != "Milk (2%)" {
		t.Errorf("iteration 0 target %q", n)
	}
	if n := x.Steps[4].Target.Name.Value; n != "Status of Eggs" {
		t.Errorf("iteration 1 extract target %q", n)
	}
	if q := x.Steps[5]; q.Target.Name.Value != "Quantity of Nuts" || q.Value.Kind() != "literal" || *q.Value.Literal != "3" {
		t.Errorf("object iteration: %+v %v", q.Target.Name, q.Value)
	}
	if c.Step("tick_each").ForEach == nil || len(c.Steps) != 3 {
		t.Error("ExpandLoops changed its argument")
	}
}

// TestUnarmedReadInsideLoop: lint judges an extract inside a loop like a
// top-level one, naming the inner step's path.
func TestUnarmedReadInsideLoop(t *testing.T) {
	t.Parallel()
	l, err := Load(loopBase)
	if err != nil {
		t.Fatal(err)
	}
	reads := UnarmedReads(l.Capability)
	if len(reads) != 1 || reads[0].Step != "tick_each.read" || reads[0].Path != "steps[1].for_each.steps[1]" {
		t.Fatalf("unarmed reads %v, want the loop's read at steps[1].for_each.steps[1]", reads)
	}
	ps := l.Lint()
	if len(ps) == 0 || ps[0].Path != "steps[1].for_each.steps[1]" || ps[0].Line <= 0 {
		t.Errorf("lint %v, want the loop's read with its line", ps)
	}
}

// TestEffectContractTakesItem: an effect contract inside a loop may match
// the iteration's element; each iteration's contract holds its own value.
func TestEffectContractTakesItem(t *testing.T) {
	t.Parallel()
	l, err := Load(loopBase)
	if err != nil {
		t.Fatal(err)
	}
	c := l.Capability
	c.Step("tick_each").ForEach.Steps[0].Effects = []domain.EffectContract{{RecordWritten: &domain.RecordWritten{
		Via: "test.read_ticks@1.0.0", Match: map[string]domain.ValueExpr{"Item": {Item: "item"}}, Count: 1}}}
	x, err := ExpandLoops(c, map[string]any{"items": []any{"Alpha", "Beta"}})
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{1: "Beta", 0: "Alpha"} {
		v := x.Steps[1+2*n].Effects[0].RecordWritten.Match["Item"]
		if v.Kind() != "literal" || *v.Literal != want {
			t.Errorf("iteration %d: match %v, want %q", n, v.String(), want)
		}
	}
	data := strings.Replace(mustRead(t, loopBase), "          risk: elevated\n", `          risk: elevated
          effects:
            - record_written: {via: test.read_ticks@1.0.0, match: {Item: {$item: item.name}}, count: 1}
`, 1)
	_, err = Parse("loop.yaml", []byte(data))
	if err == nil || !strings.Contains(err.Error(), "steps[1].for_each.steps[0].effects[0].record_written.match.Item.$item: the elements of the list are strings: they have no field name") {
		t.Errorf("a contract's $item field of a string element: %v", err)
	}
	if v := c.Step("tick_each").ForEach.Steps[0].Effects[0].RecordWritten.Match["Item"]; v.Item != "item" {
		t.Errorf("ExpandLoops changed the capability's contract: %v", v.String())
	}
}
