package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeStreamCutsStalledClient: a client that opens a run's event
// stream and never reads is cut off once a write waits longer than
// streamWriteTimeout, while the run's events file goes on growing (the
// run never waits on serve); the stream's slot is free again.
func TestServeStreamCutsStalledClient(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	start, ok := processStart(os.Getpid())
	if !ok {
		t.Skip("no process start time here")
	}
	events := filepath.Join(dir, "ev.jsonl")
	f, err := os.Create(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e := runEntry{ID: "1-2", PID: os.Getpid(), Start: start, Workspace: "w", Dir: dir, StateDir: dir,
		State: filepath.Join(dir, runStateFile), Events: events, Started: time.Now()}
	if _, err := writeEntry(e); err != nil {
		t.Fatal(err)
	}
	oldPoll, oldTimeout := servePoll, streamWriteTimeout
	servePoll, streamWriteTimeout = 5*time.Millisecond, 300*time.Millisecond
	defer func() { servePoll, streamWriteTimeout = oldPoll, oldTimeout }()
	const token = "00112233445566778899aabbccddeeff0011223344556677"
	s := newServer(token, false)
	srv := httptest.NewServer(&serveGate{token: token, next: s.mux})
	defer srv.Close()

	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
	}}
	conn, err := d.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /api/runs/1-2/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", token)

	line := `{"event":"status_update","message":"` + strings.Repeat("x", 1000) + `"}` + "\n"
	deadline := time.Now().Add(30 * time.Second)
	opened := false
	for written := 0; ; written += len(line) {
		// The run's side: appending never waits on the server.
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		n := len(s.streams)
		if n == 1 {
			opened = true
		}
		if opened && n == 0 {
			t.Logf("cut off after %d MiB written", written>>20)
			return
		}
		if time.Now().After(deadline) || written > 512<<20 {
			t.Fatalf("the stalled stream is still open after %d MiB written (opened: %v)", written>>20, opened)
		}
		if written%(64*len(line)) == 0 {
			time.Sleep(time.Millisecond) // the run's pace, not synchronisation
		}
	}
}

// TestServeStreamEndsAfterEverything: a run that wrote more events than
// one read takes, then ended, has every one of them streamed, in order,
// then a last view that says how it ended, with its lines up to its end
// line, then end (tryout 7: the page kept the run's last live state).
func TestServeStreamEndsAfterEverything(t *testing.T) {
	dir := t.TempDir()
	start, ok := processStart(os.Getpid())
	if !ok {
		t.Skip("no process start time here")
	}
	events := filepath.Join(dir, "ev.jsonl")
	if err := os.WriteFile(events, []byte(`{"event":"execution_start"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := runEntry{ID: "1-2", PID: os.Getpid(), Start: start, Workspace: "w", Dir: dir, StateDir: dir,
		State: filepath.Join(dir, runStateFile), Events: events, Started: time.Now().Truncate(time.Second)}
	rs := newRunStream(runView{entry: e})
	now := time.Now()
	if _, ended := rs.poll(now); ended {
		t.Fatal("the stream of a live run ended")
	}
	// The run writes three reads' worth of events, says how it ended, and
	// is gone.
	f, err := os.OpenFile(events, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3 * streamChunk / 1000
	for i := 1; i <= n; i++ {
		fmt.Fprintf(f, `{"event":"status_update","message":"%d %s"}`+"\n", i, strings.Repeat("x", 950))
	}
	f.Close()
	st := runState{PID: e.PID, Started: e.Started, Phase: phaseEnded, Ended: true, Status: statusCompleted,
		Ending: "completed: all done (1 iteration, 3s, $0.0100)", Lines: []stateLine{{Seq: 7, Text: "✓ Iteration 1/1 done"}}}
	data, _ := json.Marshal(&st)
	if err := os.WriteFile(e.State, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rs.e.Start++ // another process now: the run is gone
	var all strings.Builder
	for polls := 1; ; polls++ {
		out, ended := rs.poll(now)
		all.Write(out)
		if ended {
			break
		}
		if polls > 10 {
			t.Fatal("the stream of a run that is gone never ended")
		}
	}
	got := all.String()
	for i := 1; i <= n; i++ {
		if !strings.Contains(got, fmt.Sprintf(`"message":"%d x`, i)) {
			t.Fatalf("event %d of %d not streamed before the end", i, n)
		}
	}
	last := "event: view\ndata: "
	i := strings.LastIndex(got, last)
	if i < 0 {
		t.Fatalf("no last view:\n%s", got[max(0, len(got)-2000):])
	}
	tail := got[i:]
	for _, want := range []string{`"state":"completed"`, `"now":"completed: all done (1 iteration, 3s, $0.0100)"`,
		`{"seq":7,"text":"✓ Iteration 1/1 done"},{"seq":8,"text":"claude-iterate: completed: all done (1 iteration, 3s, $0.0100)"}]}` + "\n\nevent: end\ndata: {\"id\":\"1-2\"}\n\n"} {
		if !strings.Contains(tail, want) || !strings.HasSuffix(tail, "event: end\ndata: {\"id\":\"1-2\"}\n\n") {
			t.Fatalf("the last view and end lack %s:\n%s", want, tail)
		}
	}
	if strings.Contains(tail, `"message":`) {
		t.Fatalf("an event after the last view:\n%s", tail)
	}
}
