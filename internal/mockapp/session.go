package mockapp

import (
	"context"
	"net/http"
)

// sessionCookie names the cookie that carries the session id.
const sessionCookie = "md_session"

// session is a signed-on operator.
type session struct {
	ID       string
	Operator string
}

type sessionKey struct{}

func withSession(ctx context.Context, sess session) context.Context {
	return context.WithValue(ctx, sessionKey{}, sess)
}

// sessionFrom returns the session the gate attached to the request context.
func sessionFrom(ctx context.Context) (session, bool) {
	sess, ok := ctx.Value(sessionKey{}).(session)
	return sess, ok
}

// requestSession returns the live session named by the request's cookie.
func (s *Server) requestSession(r *http.Request) (session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, false
	}
	op, ok := s.lookupSession(c.Value)
	if !ok {
		return session{}, false
	}
	return session{ID: c.Value, Operator: op}, true
}

func setSessionCookie(w http.ResponseWriter, id string) {
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    id,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	})
}

func expireSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	})
}
