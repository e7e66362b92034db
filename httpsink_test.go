package main

// This file implements the notification sink of the scenarios: a loopback
// HTTP server that records every request, and can answer 500 or hang, as
// a failing or dead notification server would; and a command that bounds
// how long a command may take.
//
//	httpsink start             start the sink: $SINK_URL is its URL
//	                           (http://127.0.0.1:PORT/topic), $SINK_HOST
//	                           its address (127.0.0.1:PORT)
//	httpsink mode ok|500|hang  how it answers from now on (default ok);
//	                           leaving hang answers the requests it held
//	within DURATION command [args...]
//	                           run the command (as exec does) and fail if
//	                           it takes longer than DURATION
//
// Each request is appended to $WORK/sink.txt, its headers of interest
// sorted, then its body, then a line "----":
//
//	POST /topic
//	Authorization: Basic …
//	Content-Type: text/plain; charset=utf-8
//	Priority: 3
//	Tags: rocket
//	Title: task: run started
//
//	Running task (loop mode, up to 2 iterations)
//	----

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// sinkHeaders are the request headers the sink records.
var sinkHeaders = []string{"Actions", "Authorization", "Content-Type", "Priority", "Tags", "Title"}

// httpSink is one script's sink.
type httpSink struct {
	mu   sync.Mutex
	mode string
	file string
	stop chan struct{}
	// release is closed when the mode leaves hang: the requests it holds
	// are answered then.
	release chan struct{}
}

var sinks sync.Map // *testscript.TestScript → *httpSink

func cmdHTTPSink(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: httpsink start | httpsink mode ok|500|hang")
	}
	switch args[0] {
	case "start":
		if _, ok := sinks.Load(ts); ok {
			ts.Fatalf("httpsink start: already started")
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			ts.Fatalf("httpsink: %v", err)
		}
		s := &httpSink{mode: "ok", file: ts.MkAbs("sink.txt"), stop: make(chan struct{})}
		srv := &http.Server{Handler: s}
		go srv.Serve(ln)
		sinks.Store(ts, s)
		ts.Defer(func() {
			close(s.stop) // hung handlers return
			srv.Close()
		})
		ts.Setenv("SINK_URL", fmt.Sprintf("http://%s/topic", ln.Addr()))
		ts.Setenv("SINK_HOST", ln.Addr().String())
	case "mode":
		v, ok := sinks.Load(ts)
		if !ok || len(args) != 2 || (args[1] != "ok" && args[1] != "500" && args[1] != "hang") {
			ts.Fatalf("usage: httpsink mode ok|500|hang (after httpsink start)")
		}
		s := v.(*httpSink)
		s.mu.Lock()
		switch {
		case args[1] == "hang" && s.mode != "hang":
			s.release = make(chan struct{})
		case args[1] != "hang" && s.mode == "hang":
			close(s.release)
		}
		s.mode = args[1]
		s.mu.Unlock()
	default:
		ts.Fatalf("httpsink: unknown subcommand %q", args[0])
	}
}

// ServeHTTP records the request, then answers as the mode says.
func (s *httpSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.RequestURI())
	for _, h := range sinkHeaders {
		if v := r.Header.Get(h); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	fmt.Fprintf(&b, "\n%s\n----\n", body)
	s.mu.Lock()
	f, err := os.OpenFile(s.file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err == nil {
		f.WriteString(b.String())
		f.Close()
	}
	mode, release := s.mode, s.release
	s.mu.Unlock()
	switch mode {
	case "500":
		http.Error(w, "boom", http.StatusInternalServerError)
	case "hang":
		select {
		case <-s.stop:
		case <-release:
			io.WriteString(w, "{}")
		case <-r.Context().Done():
		}
	default:
		io.WriteString(w, "{}")
	}
}

// cmdWithin runs a command and fails if it took longer than a duration.
func cmdWithin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: within DURATION command [args...]")
	}
	limit, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("within: bad duration %q", args[0])
	}
	start := time.Now()
	err = ts.Exec(args[1], args[2:]...)
	took := time.Since(start)
	if err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	if took > limit {
		ts.Fatalf("%s took %s; want at most %s", args[1], took.Round(time.Millisecond), limit)
	}
	ts.Logf("%s took %s", args[1], took.Round(time.Millisecond))
}
