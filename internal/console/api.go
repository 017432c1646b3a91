package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/cuahq/cua/internal/hitl"
	"github.com/cuahq/cua/internal/runtime"
	"github.com/cuahq/cua/internal/surface"
)

//go:embed static
var staticFS embed.FS

var pages = template.Must(template.ParseFS(staticFS, "static/*.html"))

func (s *Server) routes() {
	m := http.NewServeMux()
	sub, _ := fs.Sub(staticFS, "static")
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(sub)))
	m.HandleFunc("GET /{$}", s.index)
	m.HandleFunc("POST /signin", s.signin)
	m.HandleFunc("GET /api/sessions", s.list)
	m.HandleFunc("GET /api/view", s.view)
	m.HandleFunc("GET /api/plan", s.plan)
	m.HandleFunc("POST /api/claim", s.guarded(s.claim))
	m.HandleFunc("POST /api/renew", s.guarded(s.renew))
	m.HandleFunc("POST /api/release", s.guarded(s.release))
	m.HandleFunc("POST /api/resume", s.guarded(s.resume))
	m.HandleFunc("POST /api/input", s.guarded(s.input))
	m.HandleFunc("GET /ws", s.cast)
	s.mux = m
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	if si, ok := s.signedIn(r, false); ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = pages.ExecuteTemplate(w, "app.html", map[string]string{"CSRF": si.csrf, "Operator": si.who.Name, "Role": si.who.Role})
		return
	}
	s.signinPage(w, http.StatusOK, "")
}

// signinPage serves the sign-in form with a fresh form CSRF token (double
// submit: a cookie and a hidden field) and, when refused, why.
func (s *Server) signinPage(w http.ResponseWriter, code int, refused string) {
	pre := randHex(16)
	http.SetCookie(w, s.cookie(preCookie, pre))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = pages.ExecuteTemplate(w, "signin.html", map[string]any{"CSRF": pre, "Refused": refused})
}

func (s *Server) cookie(name, value string) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: s.cfg.TLS != nil, SameSite: http.SameSiteStrictMode}
}

// signin answers a sign-in try: within the remote address's limit, with
// the form's CSRF token matching its cookie, the principal token is
// checked by the Authenticator, and the browser gets a session of that
// principal with its own CSRF token. Nothing in the answer says whether a
// refused token names an existing principal, except that a locked one says
// until when.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if ok, retry := s.limit.allow(r.RemoteAddr); !ok {
		secs := int(math.Ceil(retry.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.cfg.Logger.WarnContext(ctx, "console sign-in rate limited", slog.String("remote", r.RemoteAddr))
		http.Error(w, fmt.Sprintf("too many sign-in tries from this address: try again in %d s", secs), http.StatusTooManyRequests)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	pre, err := r.Cookie(preCookie)
	if err != nil || r.PostFormValue("csrf") == "" || !equal(r.PostFormValue("csrf"), pre.Value) {
		http.Error(w, "missing or wrong CSRF token", http.StatusForbidden)
		return
	}
	who, err := s.cfg.Auth.Authenticate(ctx, strings.TrimSpace(r.PostFormValue("token")))
	if err == nil && !validName(who.Name) {
		err = fmt.Errorf("console: principal name %q cannot sign in", who.Name)
	}
	if err != nil {
		msg := "Sign-in refused."
		var locked *LockedError
		if errors.As(err, &locked) {
			msg = "Sign-in refused: locked until " + locked.Until.UTC().Format("2006-01-02 15:04:05 UTC") + " after repeated wrong tokens."
		}
		s.cfg.Logger.WarnContext(ctx, "console sign-in refused", slog.String("remote", r.RemoteAddr), slog.Bool("locked", locked != nil))
		s.signinPage(w, http.StatusUnauthorized, msg)
		return
	}
	id, now := randHex(24), s.cfg.Now()
	s.mu.Lock()
	for k, si := range s.sessions { // forget the lapsed ones
		if !now.Before(si.expires) {
			delete(s.sessions, k)
		}
	}
	s.sessions[id] = &signin{who: who, csrf: randHex(24), expires: now.Add(s.cfg.SessionTTL)}
	s.mu.Unlock()
	http.SetCookie(w, s.cookie(sessionCookie, id))
	s.cfg.Logger.InfoContext(ctx, "operator signed in", slog.String("principal", who.Name), slog.String("role", who.Role))
	landing := s.cfg.Landing
	if landing == "" {
		landing = "/"
	}
	http.Redirect(w, r, landing, http.StatusSeeOther)
}

// list serves every waiting run of the queue. A relay lists only the
// sessions live in its process; a front console (Config.Fronts) asks the
// relays of the others for their leases.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	si, ok := s.signedIn(r, false)
	if !ok {
		http.Error(w, "sign in", http.StatusForbidden)
		return
	}
	rows, err := s.cfg.Broker.List(r.Context())
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "list failed"})
		return
	}
	out := make([]row, 0, len(rows))
	for _, w := range rows {
		rw := row{Waiting: w}
		if lv, ok := s.session(w.SessionID); ok {
			rw.HumanEffects = lv.humanEffects()
		} else if s.cfg.Relay != nil {
			continue
		}
		out = append(out, rw)
	}
	if s.cfg.Fronts != nil {
		s.relayed(r.Context(), si.who.Name, out)
	} else {
		for i := range out {
			if out[i].Lease == nil && out[i].Relay != "" {
				out[i].RelayError = "parked in a worker: this console has no relay credential (--relay-token-file or CUA_RELAY_TOKEN)"
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

// view tells what the screencast cannot show: an open JavaScript dialog.
func (s *Server) view(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.signedIn(r, false); !ok {
		http.Error(w, "sign in", http.StatusForbidden)
		return
	}
	lv, ok := s.session(r.URL.Query().Get("session"))
	if !ok {
		http.Error(w, "no such live session", http.StatusNotFound)
		return
	}
	lv.mu.Lock()
	snap, err := lv.observe(r.Context())
	lv.mu.Unlock()
	if err != nil && snap == nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "observe failed"})
		return
	}
	out := map[string]any{"url": lv.p.Run.Redactor.String(snap.URL)}
	if snap.Dialog != nil {
		out["dialog"] = lv.p.Run.Redactor.String(snap.Dialog.Message)
	}
	writeJSON(w, http.StatusOK, out)
}

// row is a waiting session as the list shows it: the queue's row and
// the elevated or irreversible gestures operators sent in it since it
// parked (the run's own effects, in Effects, are the automation's).
type row struct {
	hitl.Waiting
	HumanEffects []HumanEffect `json:"human_effects,omitempty"`
	// RelayError says the relay of a session parked elsewhere did not
	// answer.
	RelayError string `json:"relay_error,omitempty"`
}

// blockedError refuses a resume its plan blocks.
type blockedError struct {
	plan runtime.ResumePlan
}

func (e *blockedError) Error() string {
	return "resume refused: " + strings.Join(e.plan.Blocked, "; ")
}

type leaseReq struct {
	Session string `json:"session"`
	Epoch   uint64 `json:"epoch"`
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body: " + err.Error()})
		return false
	}
	return true
}

func (s *Server) leaseOp(w http.ResponseWriter, r *http.Request, do func(ctx context.Context, q leaseReq) (hitl.Status, error)) {
	var q leaseReq
	if !decode(w, r, &q) {
		return
	}
	st, err := do(r.Context(), q)
	var blocked *blockedError
	if errors.As(err, &blocked) {
		writeJSON(w, http.StatusConflict, map[string]any{"error": err.Error(), "plan": blocked.plan})
		return
	}
	if err != nil {
		writeJSON(w, errStatus(err), map[string]any{"error": err.Error(), "lease": st})
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// claim gives the paused session to the principal. A session the same
// principal already holds (a closed tab, a second browser of theirs) is
// picked up at its epoch and its hold renewed, instead of being refused
// until the hold lapses.
func (s *Server) claim(w http.ResponseWriter, r *http.Request, op string) {
	s.leaseOp(w, r, func(ctx context.Context, q leaseReq) (hitl.Status, error) {
		st, err := s.cfg.Broker.Claim(ctx, q.Session, op)
		if errors.Is(err, hitl.ErrConflict) && st.State == hitl.StateHumanControl && st.Holder == hitl.HumanPrefix+op {
			return s.cfg.Broker.Renew(ctx, q.Session, op, st.Epoch)
		}
		return st, err
	})
}

func (s *Server) renew(w http.ResponseWriter, r *http.Request, op string) {
	s.leaseOp(w, r, func(ctx context.Context, q leaseReq) (hitl.Status, error) {
		return s.cfg.Broker.Renew(ctx, q.Session, op, q.Epoch)
	})
}

func (s *Server) release(w http.ResponseWriter, r *http.Request, op string) {
	s.leaseOp(w, r, func(ctx context.Context, q leaseReq) (hitl.Status, error) {
		return s.cfg.Broker.Release(ctx, q.Session, op, q.Epoch)
	})
}

// resume wakes the parked run, unless its resume plan (computed by the
// engine on the screen as it is now) says resuming would fail or only
// park again: then 409 with the reasons and the plan, and nothing moves.
func (s *Server) resume(w http.ResponseWriter, r *http.Request, op string) {
	s.leaseOp(w, r, func(ctx context.Context, q leaseReq) (hitl.Status, error) {
		if lv, ok := s.session(q.Session); ok {
			plan, has, err := lv.plan(ctx)
			if err != nil {
				return hitl.Status{}, fmt.Errorf("resume %s: %w", q.Session, err)
			}
			if has && len(plan.Blocked) > 0 {
				return hitl.Status{}, &blockedError{plan: plan}
			}
		}
		return s.cfg.Broker.Resume(ctx, q.Session, "human:"+op)
	})
}

// plan serves the session's resume plan: what the run will do when
// resumed now, and what blocks resuming. A run that gives no plan (not a
// replay run) answers {"plan": null}.
func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.signedIn(r, false); !ok {
		http.Error(w, "sign in", http.StatusForbidden)
		return
	}
	lv, ok := s.session(r.URL.Query().Get("session"))
	if !ok {
		http.Error(w, "no such live session", http.StatusNotFound)
		return
	}
	plan, has, err := lv.plan(r.Context())
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "resume plan: " + lv.p.Run.Redactor.String(err.Error())})
		return
	}
	if !has {
		writeJSON(w, http.StatusOK, map[string]any{"plan": nil})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"plan": plan})
}

func (s *Server) input(w http.ResponseWriter, r *http.Request, op string) {
	lv, ok := s.session(r.URL.Query().Get("session"))
	if !ok {
		writeJSON(w, http.StatusNotFound, Outcome{Error: "no such live session"})
		return
	}
	var in Input
	if !decode(w, r, &in) {
		return
	}
	out, err := lv.act(r.Context(), op, in)
	if err != nil {
		out.Error = lv.p.Run.Redactor.String(out.Error)
		writeJSON(w, errStatus(err), out)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// cast streams the session's masked frames over a WebSocket, one binary
// PNG message per frame, until either side goes away.
func (s *Server) cast(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.signedIn(r, true); !ok {
		http.Error(w, "sign in, and send the CSRF token", http.StatusForbidden)
		return
	}
	lv, ok := s.session(r.URL.Query().Get("session"))
	if !ok {
		http.Error(w, "no such live session", http.StatusNotFound)
		return
	}
	if _, ok := lv.p.Surface.(surface.Screencaster); !ok {
		http.Error(w, "this surface has no live picture", http.StatusNotImplemented)
		return
	}
	// The gate checked Origin against Host already; Accept checks it too.
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context())
	frames, unsubscribe := lv.subscribe(s.cfg.Logger)
	defer unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return
		case png, ok := <-frames:
			if !ok {
				c.Close(websocket.StatusGoingAway, "the session is no longer parked here")
				return
			}
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := c.Write(wctx, websocket.MessageBinary, png)
			cancel()
			if err != nil {
				return
			}
		}
	}
}
