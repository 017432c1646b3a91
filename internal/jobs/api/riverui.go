package api

import (
	"html/template"
	"net/http"
)

// RiverUIPrefix is where MountRiverUI serves River's UI.
const RiverUIPrefix = "/river"

const (
	signinPath = "/signin"
	cookieName = "cua_serve"
)

// MountRiverUI serves ui (jobs.Queue.UI, read-only) under RiverUIPrefix,
// behind the same gate as the API. A browser cannot send a bearer token,
// so the gate also takes a cookie that GET /signin's form sets after the
// token is typed in (HttpOnly, SameSite=Strict); an unsigned-in GET under
// the prefix is sent there.
func (h *Handler) MountRiverUI(ui http.Handler) {
	h.ui = true
	h.mux.Handle(RiverUIPrefix+"/", securityHeaders(ui))
	h.mux.Handle(RiverUIPrefix, http.RedirectHandler(RiverUIPrefix+"/", http.StatusSeeOther))
}

var signinPage = template.Must(template.New("signin").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>cua serve: sign in</title></head>
<body><h1>cua serve</h1>
<p>Type your principal token (<code>cua users add</code>) or the token <code>cua serve</code> wrote to <code>&lt;data-dir&gt;/serve.token</code>.</p>
{{if .}}<p role="alert">{{.}}</p>{{end}}
<form method="post" action="/signin"><label>Token <input name="token" type="password" autocomplete="off" autofocus></label>
<button type="submit">Sign in</button></form></body></html>`))

// signin serves the token form (GET) and checks it (POST): a token the
// gate takes (the serve token or a principal's) sets the cookie and goes to
// the UI; any other shows the form again (401).
func (h *Handler) signin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	switch r.Method {
	case http.MethodGet:
		_ = signinPage.Execute(w, "")
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		tok := ""
		if err := r.ParseForm(); err == nil {
			tok = r.PostForm.Get("token")
		}
		if _, ok := h.holder(r.Context(), tok); !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_ = signinPage.Execute(w, "That is not a valid token.")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: tok, Path: "/", HttpOnly: true, Secure: h.scheme == "https",
			SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, RiverUIPrefix+"/", http.StatusSeeOther)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeError(w, http.StatusMethodNotAllowed, "method", "GET or POST")
	}
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
