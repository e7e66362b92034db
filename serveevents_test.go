package main

import (
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
