package record

import (
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/cuahq/cua/internal/domain"
	"github.com/cuahq/cua/internal/hitl"
)

//go:embed static
var staticFS embed.FS

var page = template.Must(template.ParseFS(staticFS, "static/record.html"))

// routes mounts the recording page and its API behind the console's gate.
func (s *Session) routes() {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/record/static/", http.FileServerFS(sub))
	s.srv.HandlePage("GET /record/static/", func(w http.ResponseWriter, r *http.Request, _, _ string) {
		files.ServeHTTP(w, r)
	})
	s.srv.HandlePage("GET /record", func(w http.ResponseWriter, _ *http.Request, csrf, op string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = page.Execute(w, map[string]any{"CSRF": csrf, "Operator": op, "Session": s.id, "Goal": s.o.Goal,
			"Types": OutputTypes})
	})
	s.srv.HandlePage("GET /record/api/state", func(w http.ResponseWriter, _ *http.Request, _, _ string) {
		s.writeState(w, http.StatusOK, "")
	})
	s.srv.HandleGuarded("POST /record/api/mark", s.mark)
	s.srv.HandleGuarded("POST /record/api/branch", func(w http.ResponseWriter, _ *http.Request, op string) {
		if !s.holds(w, op) {
			return
		}
		s.rec.Branch()
		s.writeState(w, http.StatusOK, "")
	})
	s.srv.HandleGuarded("POST /record/api/stop", s.stopped)
	s.srv.HandleGuarded("POST /record/api/find", s.find)
}

// find answers where a control shows on the live picture ({"x", "y"}),
// given its descriptor (role, name, anchor, scope): the page's "find on
// the picture", which moves nothing.
func (s *Session) find(w http.ResponseWriter, r *http.Request, _ string) {
	var d domain.TargetDescriptor
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<12)).Decode(&d); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body: " + err.Error()})
		return
	}
	x, y, err := s.srv.Where(r.Context(), s.id, d)
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": s.o.Redactor.String(err.Error())})
		return
	}
	writeJSON(w, http.StatusOK, map[string]float64{"x": x, "y": y})
}

// holds answers 403 unless op holds the session (claimed it).
func (s *Session) holds(w http.ResponseWriter, op string) bool {
	if h, _ := s.run.Lease.Holder(); h != hitl.HumanPrefix+op {
		writeJSON(w, http.StatusForbidden, map[string]string{"error": "claim the session first"})
		return false
	}
	return true
}

// markReq is a marking: where on the live picture, what, its name and
// type.
type markReq struct {
	Kind string  `json:"kind"`
	Name string  `json:"name"`
	Type string  `json:"type"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
}

func (s *Session) mark(w http.ResponseWriter, r *http.Request, op string) {
	if !s.holds(w, op) {
		return
	}
	var q markReq
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<12)).Decode(&q); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body: " + err.Error()})
		return
	}
	q.Name = strings.TrimSpace(q.Name)
	snap, node, err := s.srv.Locate(r.Context(), s.id, q.X, q.Y)
	if err == nil {
		err = s.rec.Mark(q.Kind, q.Name, q.Type, snap, node)
	}
	if err != nil {
		s.writeState(w, http.StatusUnprocessableEntity, s.o.Redactor.String(err.Error()))
		return
	}
	s.writeState(w, http.StatusOK, "")
}

// stopped ends the recording and answers with the result once compiled,
// sealed and evaluated.
func (s *Session) stopped(w http.ResponseWriter, r *http.Request, op string) {
	if !s.holds(w, op) {
		return
	}
	s.Stop()
	select {
	case <-r.Context().Done():
		return
	case <-s.done:
	}
	if s.err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": s.o.Redactor.String(s.err.Error())})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"result": s.result, "passed": s.result.Passed()})
}

func (s *Session) writeState(w http.ResponseWriter, code int, errText string) {
	s.errMu.Lock()
	last := s.lastErr
	s.errMu.Unlock()
	if errText == "" {
		errText = last
	}
	writeJSON(w, code, map[string]any{"recording": s.rec.Summary(), "error": errText})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
