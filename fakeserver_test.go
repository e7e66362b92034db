package main

// This file holds what the two fake model APIs share: the Messages API of
// fakeapi_test.go (for claude) and the Responses API of
// fakeresponses_test.go (for codex). Both follow a script, one reply per
// line, consumed in order by the model requests; both write JSON bodies and
// server-sent events the same way, and hold a hung request until they are
// closed. What differs — the requests they read, the replies' shapes, the
// directives of one API alone — stays in each API's file.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// apiStep is one scripted reply.
type apiStep struct {
	verb, arg string
	line      int
}

// parseScript parses a fake API's script. Blank lines and lines starting
// with # are ignored. The directives both APIs know (error STATUS TEXT,
// limit SECONDS, hang) are checked here; check checks the others, saying
// what is wrong with arg (or "") and whether it knows verb at all. kind
// names the script in errors ("api", "responses").
func parseScript(kind, text string, check func(verb, arg string) (problem string, known bool)) ([]apiStep, error) {
	var steps []apiStep
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		problem, known := "", true
		switch verb {
		case "error":
			code, _, _ := strings.Cut(arg, " ")
			if n, err := strconv.Atoi(code); err != nil || n < 400 || n > 599 {
				problem = fmt.Sprintf("bad status %q", code)
			}
		case "limit":
			if n, err := strconv.Atoi(arg); err != nil || n < 0 {
				problem = fmt.Sprintf("bad seconds %q", arg)
			}
		case "hang":
		default:
			problem, known = check(verb, arg)
		}
		if !known {
			return nil, fmt.Errorf("%s script line %d: unknown directive %q", kind, i+1, verb)
		}
		if problem != "" {
			return nil, fmt.Errorf("%s script line %d: %s: %s", kind, i+1, verb, problem)
		}
		steps = append(steps, apiStep{verb: verb, arg: arg, line: i + 1})
	}
	return steps, nil
}

// isJSONObject reports whether s is a JSON object, as a tool call's input.
func isJSONObject(s string) bool {
	return json.Valid([]byte(s)) && strings.HasPrefix(strings.TrimSpace(s), "{")
}

// errorStep reads the argument of an error directive: STATUS TEXT.
func errorStep(arg string) (status int, text string) {
	code, text, _ := strings.Cut(arg, " ")
	status, _ = strconv.Atoi(code)
	return status, text
}

// fakeServer is the part of a running fake API that follows the script:
// the loopback server, the log, the script and how far it has been served.
type fakeServer struct {
	name string // the fake's name at the start of its log lines
	srv  *httptest.Server
	logf func(format string, args ...any)
	// hung is closed by close to release the requests held by hang.
	hung chan struct{}

	mu     sync.Mutex
	script []apiStep
	served int // model requests answered so far
	ids    int // replies numbered so far
}

// start serves the fake's requests with serve on a loopback port.
func (s *fakeServer) start(serve http.HandlerFunc) {
	s.hung = make(chan struct{})
	s.srv = httptest.NewServer(serve)
}

// close stops the server, first releasing the requests held by hang.
func (s *fakeServer) close() {
	close(s.hung)
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// next takes the script's reply to the next model request and returns the
// request's number (from 1); ok is false, and it is logged, when the script
// is exhausted.
func (s *fakeServer) next() (n int, step apiStep, ok bool) {
	s.mu.Lock()
	n = s.served + 1
	s.served++
	if n <= len(s.script) {
		step, ok = s.script[n-1], true
	}
	s.mu.Unlock()
	if !ok {
		s.logf("%s: model request %d: script exhausted (%d lines)", s.name, n, len(s.script))
	}
	return n, step, ok
}

// newID numbers a reply: "0001", "0002"...
func (s *fakeServer) newID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%04d", s.ids)
}

// hang holds request r until its client gives up or the fake closes.
func (s *fakeServer) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
		s.logf("%s: the client gave up the hung request", s.name)
	case <-s.hung:
	}
}

// sseStream starts a stream of server-sent events, its request id in the
// header idHeader, and returns what writes one event: its name, and its
// data v with v's type set to the name.
func sseStream(w http.ResponseWriter, idHeader, id string) func(name string, v map[string]any) {
	h := w.Header()
	h.Set("content-type", "text/event-stream")
	h.Set("cache-control", "no-cache")
	h.Set(idHeader, id)
	w.WriteHeader(http.StatusOK)
	return func(name string, v map[string]any) {
		v["type"] = name
		data, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, _ := json.Marshal(v)
	w.Header().Set("content-type", "application/json")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(status)
	w.Write(data)
}

// splitUTF8 cuts s into pieces of at most n bytes (n > 0), never inside a
// character: each delta the API streams is a valid string.
func splitUTF8(s string, n int) []string {
	var parts []string
	for len(s) > 0 {
		k := min(len(s), n)
		for k < len(s) && k > 0 && !utf8.RuneStart(s[k]) {
			k--
		}
		if k == 0 {
			_, k = utf8.DecodeRuneInString(s)
		}
		parts = append(parts, s[:k])
		s = s[k:]
	}
	return parts
}
