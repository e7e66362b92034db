package main

// This file implements serve's JSON API and its page. The rules are:
//
//   - The runs are the registry's views (ps.go's runView), exactly as
//     'ps --json' shows them; one run adds its last records (for the
//     chart) and its last lines, from the files the run writes.
//   - An id that is not a live run's is 404; a body that is not what the
//     action takes is 400; an answer to a question no longer pending is
//     409. Errors are {"error": "..."}.
//   - The page is embedded (servepage/), with no build step and nothing
//     from elsewhere: it runs its own script and style only (the Content-
//     Security-Policy says so), and puts the agent's text in the page as
//     text, never as markup.

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"time"
)

//go:embed servepage
var servePage embed.FS

// pageTemplate is the page, with the token (for the actions' header) and
// whether actions are served.
var pageTemplate = template.Must(template.ParseFS(servePage, "servepage/index.html"))

// pagePolicy is the page's Content-Security-Policy: its own script, style
// and requests only.
const pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Limits of the API.
const (
	// serveRecords is how many of a run's last records its detail holds.
	serveRecords = 100
	// bodyTimeout bounds the time to send an answer's request body
	// (maxAnswerJSON its size).
	bodyTimeout = 30 * time.Second
)

// runDetail is one run, as GET /api/runs/{id} shows it.
type runDetail struct {
	runView
	// History is the run's last records, oldest first; Lines the last
	// lines of its output, as its state file has them.
	History []*iterationRecord `json:"history"`
	Lines   []stateLine        `json:"lines"`
}

// newServer makes the server for token.
func newServer(token string, readOnly bool) *server {
	s := &server{token: token, readOnly: readOnly, streams: make(chan struct{}, maxStreams), mux: http.NewServeMux(), reader: newRunsReader()}
	m := s.mux
	m.HandleFunc("GET /{$}", s.page)
	m.HandleFunc("GET "+servePagePath+"{id}", s.page)
	m.HandleFunc("GET /app.js", asset("servepage/app.js", "text/javascript; charset=utf-8"))
	m.HandleFunc("GET /style.css", asset("servepage/style.css", "text/css; charset=utf-8"))
	m.HandleFunc("GET /api/runs", s.runs)
	m.HandleFunc("GET /api/runs/{id}", s.run)
	m.HandleFunc("GET /api/runs/{id}/events", s.events)
	if !readOnly {
		m.HandleFunc("POST /api/runs/{id}/stop", s.stop)
		m.HandleFunc("DELETE /api/runs/{id}/stop", s.stop)
		m.HandleFunc("POST /api/runs/{id}/answer", s.answer)
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		serveError(w, r, http.StatusNotFound, "not found")
	})
	return s
}

// page serves the page.
func (s *server) page(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, map[string]any{"Token": s.token, "ReadOnly": s.readOnly}); err != nil {
		serveError(w, r, http.StatusInternalServerError, "cannot make the page")
		return
	}
	w.Header().Set("Content-Security-Policy", pagePolicy)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// asset serves an embedded file of the page.
func asset(name, ctype string) http.HandlerFunc {
	data, err := servePage.ReadFile(name)
	if err != nil {
		panic("serve: missing embedded " + name) // the build embeds it
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Write(data)
	}
}

// runs serves GET /api/runs: ps --json.
func (s *server) runs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	runs, err := s.reader.runs("")
	s.mu.Unlock()
	if err != nil {
		serveError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	if runs == nil {
		runs = []runView{}
	}
	serveJSON(w, http.StatusOK, runs)
}

// find is the live run r names, or nil once it answered 404.
func (s *server) find(w http.ResponseWriter, r *http.Request) *runView {
	v, err := findRun(r.PathValue("id"))
	if errors.Is(err, errNoRun) {
		serveError(w, r, http.StatusNotFound, "no such run going on: "+r.PathValue("id"))
		return nil
	}
	if err != nil {
		serveError(w, r, http.StatusInternalServerError, err.Error())
		return nil
	}
	return &v
}

// run serves GET /api/runs/{id}.
func (s *server) run(w http.ResponseWriter, r *http.Request) {
	v := s.find(w, r)
	if v == nil {
		return
	}
	serveJSON(w, http.StatusOK, detailOf(*v, serveRecords))
}

// detailOf is v with its last n records and its last lines.
func detailOf(v runView, n int) runDetail {
	st, _ := readRunState(v.entry.State)
	return runDetail{runView: v, History: lastRecords(filepath.Join(v.entry.StateDir, historyFile), v.ID, n), Lines: linesOf(st, v.PID)}
}

// linesOf is the last lines of run pid's output its state file st keeps,
// up to its end line once it ended.
func linesOf(st *runState, pid int) []stateLine {
	if st == nil || st.PID != pid {
		return []stateLine{}
	}
	lines := append(slices.Clip(st.Lines), st.endLines()...) // st may be shared: never appended to
	if lines == nil {
		return []stateLine{}
	}
	return lines
}

// lastRecords returns the last n records of run id in the history at path,
// oldest first: the run's are together at the end of the file, read
// backward until one of another run.
func lastRecords(path, id string, n int) []*iterationRecord {
	out := []*iterationRecord{}
	h, err := openHistoryReader(path)
	if err != nil {
		return out
	}
	defer h.close()
	h.eachBefore(h.size, func(rec *iterationRecord, at int64) bool {
		if rec.Run != id {
			return false // an earlier run's: this run's records, if any, came after
		}
		out = append(out, rec)
		return len(out) < n
	})
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// stop serves POST and DELETE /api/runs/{id}/stop: a stop request after
// the iteration, and its cancellation.
func (s *server) stop(w http.ResponseWriter, r *http.Request) {
	v := s.find(w, r)
	if v == nil {
		return
	}
	if r.Method == http.MethodDelete {
		had, err := v.cancelStop()
		if err != nil {
			serveError(w, r, http.StatusConflict, err.Error())
			return
		}
		if !had && keyStopped(v.PID, v.entry.State) {
			serveError(w, r, http.StatusConflict, "the stop was asked with the s key in the run's terminal: press s there to cancel it")
			return
		}
		serveJSON(w, http.StatusOK, map[string]bool{"stopRequested": false, "cancelled": had})
		return
	}
	if err := v.requestStop(); err != nil {
		serveError(w, r, http.StatusConflict, err.Error())
		return
	}
	serveJSON(w, http.StatusOK, map[string]bool{"stopRequested": true})
}

// answer serves POST /api/runs/{id}/answer, {"answer": "text"}.
func (s *server) answer(w http.ResponseWriter, r *http.Request) {
	v := s.find(w, r)
	if v == nil {
		return
	}
	var body struct {
		Answer *string `json:"answer"`
	}
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAnswerJSON))
	if err != nil {
		serveError(w, r, http.StatusRequestEntityTooLarge, "the answer is too long")
		return
	}
	if json.Unmarshal(data, &body) != nil || body.Answer == nil {
		serveError(w, r, http.StatusBadRequest, `want a JSON body: {"answer": "text"}`)
		return
	}
	if err := v.answer(*body.Answer); err != nil {
		status := http.StatusConflict
		var ue *usageError
		if errors.As(err, &ue) {
			status = http.StatusBadRequest
		}
		serveError(w, r, status, err.Error())
		return
	}
	serveJSON(w, http.StatusOK, map[string]bool{"answered": true})
}
