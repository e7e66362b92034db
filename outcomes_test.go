package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDescribeDenial(t *testing.T) {
	root := "/proj"
	tests := []struct {
		name, input, want string
	}{
		{"Write", `{"file_path":"/proj/src/a.go","content":"x"}`, "Write src/a.go"},
		{"Edit", `{"file_path":"/elsewhere/b.go"}`, "Edit /elsewhere/b.go"},
		{"Bash", `{"command":"npm test","description":"run"}`, `Bash "npm test"`},
		{"Bash", `{"command":"echo a\n  echo b"}`, `Bash "echo a echo b"`},
		{"Bash", `{"command":"` + strings.Repeat("x", 100) + `"}`, `Bash "` + strings.Repeat("x", 60) + `… (40 more bytes)"`},
		{"WebFetch", `{"url":"https://e.com"}`, `WebFetch "https://e.com"`},
		{"Mystery", `{"n":1}`, "Mystery"},
		{"", `not json`, "a tool"},
	}
	for _, tt := range tests {
		got := describeDenial(permissionDenial{ToolName: tt.name, ToolInput: json.RawMessage(tt.input)}, root)
		if got != tt.want {
			t.Errorf("describeDenial(%s %s) = %q; want %q", tt.name, tt.input, got, tt.want)
		}
	}
}

func TestDenialSummary(t *testing.T) {
	d := func(cmd string) permissionDenial {
		return permissionDenial{ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"` + cmd + `"}`)}
	}
	if got, want := denialSummary(describeDenials([]permissionDenial{d("a")}, "/"), 5), `1 tool call refused: Bash "a"`; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	if got, want := denialSummary(describeDenials([]permissionDenial{d("a"), d("b")}, "/"), 2), `2 tool calls refused: Bash "a", Bash "b"`; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
	got := denialSummary(describeDenials([]permissionDenial{d("a"), d("b"), d("c"), d("d")}, "/"), 2)
	if want := `4 tool calls refused: Bash "a", Bash "b", and 2 more`; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}

func TestOutcomeFailureText(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		e     streamEvent
		fail  bool
		why   string
		label string
	}{
		{streamEvent{Subtype: "success", Result: str("ok")}, false, "", "success"},
		{streamEvent{Subtype: "success", IsError: true, Result: str("API Error: 500")}, true, "API Error: 500", "error"},
		{streamEvent{Subtype: "success", IsError: true}, true, "an error result without text", "error"},
		{streamEvent{Subtype: "error_max_turns", IsError: true, Errors: json.RawMessage(`["Reached maximum number of turns (1)"]`)}, true, "error_max_turns: Reached maximum number of turns (1)", "error_max_turns"},
		{streamEvent{IsError: true, Result: str("x")}, true, "x", "error"},
	}
	for _, tt := range tests {
		e := tt.e
		e.Type = "result"
		o := &iterationOutcome{result: &e}
		fail, why := o.failed()
		if fail != tt.fail || why != tt.why {
			t.Errorf("failed(%+v) = %v, %q; want %v, %q", e, fail, why, tt.fail, tt.why)
		}
		if l := resultLabel(&e); l != tt.label {
			t.Errorf("resultLabel(%+v) = %q; want %q", e, l, tt.label)
		}
	}
}

func TestTruthfulEnding(t *testing.T) {
	maxIter := &groupedCondition{group: groupConditions, c: &condition{Type: condMaxIterations, Count: 2}}
	streak := &groupedCondition{group: groupFailure, c: &condition{Type: condFailureStreak, Count: 3}}
	stopped := endingFor(maxIter, "max iterations reached (2/2)")

	if e := truthfulEnding(stopped, maxIter, false, ""); e.code != exitOK || e.reason != "stopped: max iterations reached (2/2)" {
		t.Errorf("a success last: %+v", e)
	}
	e := truthfulEnding(stopped, maxIter, true, "API Error: 500")
	if e.code != exitError || e.status != statusFailed || e.reason != "failed: max iterations reached (2/2), and the last iteration failed: API Error: 500" {
		t.Errorf("a failure last: %+v", e)
	}
	e = truthfulEnding(endingFor(streak, "3 consecutive failed iterations"), streak, true, "API Error: 500")
	if e.code != exitError || e.reason != "failed: 3 consecutive failed iterations (last error: API Error: 500)" {
		t.Errorf("a streak: %+v", e)
	}
	onErr := &groupedCondition{group: groupFailure, c: &condition{Type: condOnError}}
	if e := truthfulEnding(endingFor(onErr, "iteration failed: boom"), onErr, true, "boom"); e.reason != "failed: iteration failed: boom" {
		t.Errorf("the cause already named: %+v", e)
	}
}

func TestFormatClock(t *testing.T) {
	loc := time.FixedZone("XST", 3600)
	now := time.Date(2025, 3, 10, 9, 0, 0, 0, time.Local)
	same := now.Add(2 * time.Hour)
	if got, want := formatClock(same, now), same.Format("15:04:05 MST"); got != want {
		t.Errorf("today: %q; want %q", got, want)
	}
	next := time.Date(2025, 3, 12, 8, 30, 0, 0, loc)
	got := formatClock(next, now)
	if want := next.Local().Format("Mon Jan 2 15:04:05 MST"); got != want {
		t.Errorf("another day: %q; want %q", got, want)
	}
}

func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("hello"), 0o644)
	if data, err := readRegularFile(small, 10); err != nil || string(data) != "hello" {
		t.Errorf("small: %q, %v", data, err)
	}
	if _, err := readRegularFile(small, 4); err == nil || !strings.Contains(err.Error(), "larger than 4 bytes") {
		t.Errorf("over the cap: %v", err)
	}
	if data, err := readRegularFile(small, 5); err != nil || string(data) != "hello" {
		t.Errorf("at the cap: %q, %v", data, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if data, err := readRegularFile(empty, 10); err != nil || len(data) != 0 {
		t.Errorf("empty: %q, %v", data, err)
	}
	// A /proc file says it is empty: read whole all the same, under the
	// cap; over it, an error.
	if runtime.GOOS == "linux" {
		if data, err := readRegularFile("/proc/self/status", 1<<20); err != nil || !bytes.HasPrefix(data, []byte("Name:")) || len(data) < 100 {
			t.Errorf("/proc/self/status: %d bytes, %v", len(data), err)
		}
		if _, err := readRegularFile("/proc/self/status", 10); err == nil || !strings.Contains(err.Error(), "larger than 10 bytes") {
			t.Errorf("/proc/self/status over the cap: %v", err)
		}
	}
	big := bytes.Repeat([]byte("0123456789"), 30000)
	os.WriteFile(filepath.Join(dir, "big"), big, 0o644)
	if data, err := readRegularFile(filepath.Join(dir, "big"), 1<<20); err != nil || !bytes.Equal(data, big) {
		t.Errorf("big: %d bytes, %v", len(data), err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(small, link)
	if data, err := readRegularFile(link, 10); err != nil || string(data) != "hello" {
		t.Errorf("a link to a regular file: %q, %v", data, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := readRegularFile(fifo, 10); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, errNotRegular) || !strings.Contains(err.Error(), "a named pipe") {
			t.Errorf("fifo: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
	if _, err := readRegularFile("/dev/zero", 10); !errors.Is(err, errNotRegular) {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := readRegularFile(dir, 10); err == nil || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := readRegularFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

func TestShellQuote(t *testing.T) {
	checkStrings(t, "shellQuote", shellQuote, map[string]string{
		"demo": "demo", "./tasks/x": "./tasks/x", "my task": "'my task'", "it's": `'it'\''s'`, "": "''",
	})
}

// checkStrings is the table test of a function of one string: f (named
// name) must turn each key of cases into its value.
func checkStrings(t *testing.T, name string, f func(string) string, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%q) = %q; want %q", name, in, got, want)
		}
	}
}

func TestVersionFrom(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}
	if got := versionFrom("", bi); got != "v1.2.3" {
		t.Errorf("go install build: %q", got)
	}
	if got := versionFrom("v9", bi); got != "v9" {
		t.Errorf("linked: %q", got)
	}
	if got := versionFrom("", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}); got != "devel" {
		t.Errorf("devel: %q", got)
	}
	if got := versionFrom("", nil); got != "devel" {
		t.Errorf("no build info: %q", got)
	}
}

func TestCheckStopPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".stop")
	if err := checkStopPath(p); err != nil {
		t.Errorf("missing: %v", err)
	}
	os.WriteFile(p, nil, 0o644)
	if err := checkStopPath(p); err != nil || !stopFileExists(p) {
		t.Errorf("a file: %v", err)
	}
	os.Remove(p)
	os.Symlink("nowhere", p) // a link, even dangling, is no stop request
	if err := checkStopPath(p); err == nil || !strings.Contains(err.Error(), "is a symbolic link to nowhere, not a stop request") || stopFileExists(p) {
		t.Errorf("a link: %v", err)
	}
	os.Remove(p)
	os.Mkdir(p, 0o755)
	if err := checkStopPath(p); err == nil || !strings.Contains(err.Error(), "is a directory, not a stop request") || stopFileExists(p) {
		t.Errorf("a directory: %v", err)
	}
	if _, err := removeStopFile(p); err == nil {
		t.Error("a directory removed as a stop request")
	}
}

func TestCheckNotifyURL(t *testing.T) {
	for _, bad := range []string{"https://h/a b", "https://h/\tx", "ftp://h/x", "https://"} {
		if checkNotifyURL(bad) == nil {
			t.Errorf("checkNotifyURL(%q) accepted", bad)
		}
	}
	if err := checkNotifyURL("https://ntfy.sh/a%20b"); err != nil {
		t.Errorf("encoded space: %v", err)
	}
}
