package mockapp

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Shape drift: one change to the items of the Document Checklist or of the
// Pending Approvals queue, for proving that a capability which ticks or
// approves items by name halts or still answers right when the list moves
// under it.
//
//	POST /_control/shapes {"page": "checklist"|"approvals", "change": NAME}   NAME one of ShapeDriftChanges
//	POST /_control/shapes {"change": "off"}
//	GET  /_control/shapes → {"drift": ShapeDrift|null, "pages": [...], "changes": [...]}
//
// One shape drift is in force at a time; setting one replaces the last.
// The checklist drifts change the documents every checklist page shows
// (saved checklists are kept as saved); the approvals drifts, and "off",
// put the approvals queue back to its fixture as that change has it
// (approved rows are forgotten). POST /_control/reset clears the drift.
// The changes:
//
//	page        renamed_item                        extra_item                                    missing_item
//	checklist   "Photo ID" is "Photo identification" "Proof of income" after "Proof of address"   no "Signed agreement"
//	approvals   "Laptop repair" is "Notebook repair" "Catering invoice" ($640.00) first           no "Conference travel"

// ShapeDrift is a shape drift, as the control API reports it.
type ShapeDrift struct {
	Page   string `json:"page"`
	Change string `json:"change"`
	Detail string `json:"detail"`
}

// The pages a shape drift applies to.
const (
	ShapePageChecklist = "checklist"
	ShapePageApprovals = "approvals"
)

// ShapeDriftChanges lists the shape drift changes, sorted.
var ShapeDriftChanges = []string{"extra_item", "missing_item", "renamed_item"}

// shapePages lists the pages a shape drift applies to.
var shapePages = []string{ShapePageApprovals, ShapePageChecklist}

// checklistFixture is the documents of every checklist, in page order.
var checklistFixture = []string{"Proof of address", "Photo ID", "Signed agreement", "Income statement", "Tax form"}

// approvalFixture is the approvals queue as change (one of
// ShapeDriftChanges, or "" for none) has it.
func approvalFixture(change string) []approvalRow {
	rows := []approvalRow{
		{ID: "PA-101", Item: "Office chairs", Cents: 125000},
		{ID: "PA-102", Item: "Laptop repair", Cents: 38000},
		{ID: "PA-103", Item: "Conference travel", Cents: 214050},
		{ID: "PA-104", Item: "Printer toner", Cents: 9620},
	}
	switch change {
	case "renamed_item":
		rows[1].Item = "Notebook repair"
	case "extra_item":
		rows = slices.Insert(rows, 0, approvalRow{ID: "PA-100", Item: "Catering invoice", Cents: 64000})
	case "missing_item":
		rows = slices.Delete(rows, 2, 3)
	}
	return rows
}

// checklistItems returns the documents a checklist shows under drift d.
func checklistItems(d *ShapeDrift) []string {
	items := slices.Clone(checklistFixture)
	if d == nil || d.Page != ShapePageChecklist {
		return items
	}
	switch d.Change {
	case "renamed_item":
		items[1] = "Photo identification"
	case "extra_item":
		items = slices.Insert(items, 1, "Proof of income")
	case "missing_item":
		items = slices.Delete(items, 2, 3)
	}
	return items
}

// shapeDriftDetail says what a change does to a page.
func shapeDriftDetail(page, change string) string {
	details := map[string]string{
		"checklist/renamed_item": `"Photo ID" is renamed "Photo identification"`,
		"checklist/extra_item":   `"Proof of income" is added after "Proof of address"`,
		"checklist/missing_item": `"Signed agreement" is gone`,
		"approvals/renamed_item": `"Laptop repair" is renamed "Notebook repair"`,
		"approvals/extra_item":   `"Catering invoice" ($640.00) is added first`,
		"approvals/missing_item": `"Conference travel" is gone`,
	}
	return details[page+"/"+change]
}

// ShapeDriftStatus is the body of every /_control/shapes answer.
type ShapeDriftStatus struct {
	Drift   *ShapeDrift `json:"drift"`
	Pages   []string    `json:"pages"`
	Changes []string    `json:"changes"`
}

func (s *Server) shapeDriftStatus() ShapeDriftStatus {
	return ShapeDriftStatus{Drift: s.shapeDrift(), Pages: shapePages, Changes: ShapeDriftChanges}
}

func (s *Server) handleShapeDriftState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.shapeDriftStatus())
}

// handleShapeDrift answers POST /_control/shapes (see the top of this
// file). A refused request is 400 naming the field (page, change or body)
// and changes nothing.
func (s *Server) handleShapeDrift(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Page   *string `json:"page"`
		Change *string `json:"change"`
	}
	if cerr := decodeControl(r, &req); cerr != nil {
		writeJSON(w, http.StatusBadRequest, cerr)
		return
	}
	changes := strings.Join(ShapeDriftChanges, ", ")
	var cerr *controlError
	switch {
	case req.Change == nil:
		cerr = &controlError{Error: fmt.Sprintf("change: required; want one of %s, or \"off\"", changes), Field: "change"}
	case *req.Change == DriftOff && req.Page != nil:
		cerr = &controlError{Error: "page: not allowed with change \"off\"", Field: "page"}
	case *req.Change != DriftOff && !slices.Contains(ShapeDriftChanges, *req.Change):
		cerr = &controlError{Error: fmt.Sprintf("change: unknown change %q; want one of %s, or \"off\"", *req.Change, changes), Field: "change"}
	case *req.Change != DriftOff && req.Page == nil:
		cerr = &controlError{Error: fmt.Sprintf("page: required; want one of %s", strings.Join(shapePages, ", ")), Field: "page"}
	case *req.Change != DriftOff && !slices.Contains(shapePages, *req.Page):
		cerr = &controlError{Error: fmt.Sprintf("page: unknown page %q; want one of %s", *req.Page, strings.Join(shapePages, ", ")), Field: "page"}
	}
	if cerr != nil {
		writeJSON(w, http.StatusBadRequest, cerr)
		return
	}
	var d *ShapeDrift
	if *req.Change != DriftOff {
		d = &ShapeDrift{Page: *req.Page, Change: *req.Change, Detail: shapeDriftDetail(*req.Page, *req.Change)}
	}
	s.setShapeDrift(d)
	if d != nil {
		s.logger.Info("shape drift set", "page", d.Page, "change", d.Change)
	} else {
		s.logger.Info("shape drift off")
	}
	writeJSON(w, http.StatusOK, s.shapeDriftStatus())
}

// setShapeDrift puts d in force (nil: none) and the approvals queue back
// to its fixture as d has it.
func (s *Server) setShapeDrift(d *ShapeDrift) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.shapes.drift = d
	change := ""
	if d != nil && d.Page == ShapePageApprovals {
		change = d.Change
	}
	if d == nil || d.Page == ShapePageApprovals {
		s.st.shapes.queue = approvalFixture(change)
	}
}

// RouteShapes is the control route of the shape drift.
const RouteShapes = controlPrefix + "shapes"

// SetShapeDrift puts change (one of [ShapeDriftChanges]) in force on page
// ([ShapePageChecklist] or [ShapePageApprovals]); change "off" (page
// empty) clears it. It returns the status the app put in force.
func (c *Client) SetShapeDrift(ctx context.Context, page, change string) (ShapeDriftStatus, error) {
	body := map[string]string{"change": change}
	if page != "" {
		body["page"] = page
	}
	var v ShapeDriftStatus
	err := c.do(ctx, http.MethodPost, RouteShapes, body, &v)
	return v, err
}
