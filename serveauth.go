package main

// This file decides who may do what in serve. The rules are:
//
//   - Every request carries the token: in an Authorization: Bearer header,
//     in the cookie, or once in the URL (?token=), which sets the cookie
//     (HttpOnly, SameSite=Strict) and, for the page, sends the browser to
//     the same address without it. A wrong or missing token is 401; a
//     wrong header is not helped by a right cookie. Tokens are compared in
//     constant time.
//   - A request that changes something (POST, DELETE) carries the token in
//     the header — a cookie is not enough, so that a cross-site form post,
//     which cannot set a header, never works — and comes from the page's
//     own origin: an Origin or Sec-Fetch-Site header saying otherwise is
//     403. (A program such as curl sends neither, and the header token.)
//   - With --read-only, no request changes anything: 403.
//   - Every answer forbids framing, sniffing, caching and referrers; the
//     page's may run its own script and style only (serveapi.go).

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// How a request carried the token.
const (
	credNone = iota
	credHeader
	credCookie
	credQuery
)

// serveGate lets through to next the requests that may be served.
type serveGate struct {
	token    string
	readOnly bool
	next     http.Handler
}

// ServeHTTP checks r's token and origin, then serves it.
func (s *serveGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	cred := s.credential(r)
	if cred == credNone {
		h.Set("WWW-Authenticate", `Bearer realm="claude-iterate"`)
		serveError(w, r, http.StatusUnauthorized, "missing or wrong token: open the URL 'claude-iterate serve' printed, or send Authorization: Bearer <token>")
		return
	}
	if cred == credQuery {
		http.SetCookie(w, &http.Cookie{Name: serveCookie, Value: s.token, Path: "/", MaxAge: 400 * 24 * 3600,
			HttpOnly: true, SameSite: http.SameSiteStrictMode})
		if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
			// The token leaves the address bar and the history.
			q := r.URL.Query()
			q.Del("token")
			u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		switch {
		case s.readOnly:
			serveError(w, r, http.StatusForbidden, "serve is read-only (--read-only): no action")
			return
		case cred != credHeader:
			serveError(w, r, http.StatusForbidden, "an action needs the token in an Authorization: Bearer header")
			return
		case !sameOrigin(r):
			serveError(w, r, http.StatusForbidden, "cross-origin request refused")
			return
		}
	}
	s.next.ServeHTTP(w, r)
}

// credential says how r carries the right token: credNone when it carries
// none, or a wrong one. A header, when there is one, decides; then a
// token in the URL; then the cookie.
func (s *serveGate) credential(r *http.Request) int {
	if a := r.Header.Get("Authorization"); a != "" {
		t, ok := strings.CutPrefix(a, "Bearer ")
		if ok && s.tokenIs(strings.TrimSpace(t)) {
			return credHeader
		}
		return credNone
	}
	// A token in the URL decides too, so that a right one leaves the
	// address bar even when the cookie is there already.
	if q, ok := r.URL.Query()["token"]; ok {
		if len(q) == 1 && s.tokenIs(q[0]) {
			return credQuery
		}
		return credNone
	}
	if c, err := r.Cookie(serveCookie); err == nil && s.tokenIs(c.Value) {
		return credCookie
	}
	return credNone
}

// tokenIs compares t with the token in constant time.
func (s *serveGate) tokenIs(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// serveCookie is the cookie's name. Cookies do not tell ports apart: every
// serve of one user shares the token (serveToken), and so the cookie.
const serveCookie = "claude_iterate_token"

// sameOrigin reports whether r comes from the page's own origin, as far as
// the browser says: an Origin header naming another host, or a
// Sec-Fetch-Site other than same-origin, is another site.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == r.Host
}

// serveError answers r with status and msg: JSON ({"error": msg}) for the
// API, text for the rest.
func serveError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		serveJSON(w, status, map[string]string{"error": msg})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(msg + "\n"))
}

// serveJSON answers with v as JSON.
func serveJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"cannot encode the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}
