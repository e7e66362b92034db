package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// statusAt writes content to a .status.json in dir and reads its copy.
func statusAt(t *testing.T, path, content string) statusCopy {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := readStatusCopy(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStatusCopySame(t *testing.T) {
	path := filepath.Join(t.TempDir(), statusFile)
	a := statusAt(t, path, `{"worked": true}`)
	b, err := readStatusCopy(path)
	if err != nil {
		t.Fatal(err)
	}
	if !a.same(b) {
		t.Errorf("the same file read twice: not the same")
	}
	// The same bytes written again, with another time: written.
	old := a.mod.Add(-time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if c, _ := readStatusCopy(path); a.same(c) {
		t.Errorf("a file whose time changed is the same")
	}
	// Other bytes of the same size, the time put back: written (the hash).
	d := statusAt(t, path, `{"worked":false}`)
	if err := os.Chtimes(path, d.mod, d.mod); err != nil {
		t.Fatal(err)
	}
	statusAt(t, path, `{"worked":  true}`)
	if err := os.Chtimes(path, d.mod, d.mod); err != nil {
		t.Fatal(err)
	}
	e, _ := readStatusCopy(path)
	if d.same(e) {
		t.Errorf("other content with the same size and time is the same")
	}
	// Another file in its place: written (the inode).
	statusAt(t, path+".new", `{"worked":  true}`)
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	g, _ := readStatusCopy(path)
	if g.ino == e.ino || e.same(g) {
		t.Errorf("a file renamed into place is the same (ino %d, %d)", e.ino, g.ino)
	}
	// Missing before and after: the same; missing, then there: not.
	if !(statusCopy{}).same(statusCopy{}) || (statusCopy{}).same(g) {
		t.Errorf("a missing file compares wrong")
	}
}

func TestStatusLedgerBefore(t *testing.T) {
	path := filepath.Join(t.TempDir(), statusFile)
	var l statusLedger
	l.begin(path, statusCopy{}, false)
	if got := l.before(); got.exists {
		t.Fatalf("before() of a missing file = %+v", got)
	}
	a := statusAt(t, path, `{"question": "a?"}`)
	b := l.before()
	if !a.same(b) || b.status.Question != "a?" {
		t.Errorf("before() = %+v; want the file read", b)
	}
	// Unchanged: the copy last read, with what it said.
	if c := l.before(); !c.same(b) || c.status.Question != "a?" {
		t.Errorf("before() of an unchanged file = %+v", c)
	}
	// A retried iteration: the file as the first attempt found it.
	l.retried(statusCopy{})
	if c := l.before(); c.exists {
		t.Errorf("before() of a retry = %+v; want the first attempt's", c)
	}
	if c := l.before(); !c.exists {
		t.Errorf("before() after the retry = %+v; want the file", c)
	}
}

func TestEvidence(t *testing.T) {
	yes, no := true, false
	parsed := func(s taskStatus) statusCopy {
		s.Source = statusFile
		return statusCopy{exists: true, ino: 1, size: 10, status: s, parsed: true}
	}
	rewritten := func(s taskStatus) statusCopy {
		c := parsed(s)
		c.size = 11
		return c
	}
	tests := []struct {
		name           string
		start, before  statusCopy
		after          statusCopy
		accept, failed bool
		best           int
		mode           string

		complete, madeProgress bool
		worked                 *bool
		question               string
		leftIn, withdrawn      bool
		progress               int
	}{
		{name: "nothing", mode: modeLoop, progress: progressNone},
		{name: "stale worked", before: parsed(taskStatus{Worked: &yes}), after: parsed(taskStatus{Worked: &yes}),
			mode: modeIterative, progress: progressNone},
		{name: "worked written", before: parsed(taskStatus{Worked: &yes}), after: rewritten(taskStatus{Worked: &yes}),
			mode: modeIterative, worked: &yes, madeProgress: true, withdrawn: true, progress: progressMade},
		{name: "worked false written", after: parsed(taskStatus{Worked: &no}),
			mode: modeIterative, worked: &no, withdrawn: true, progress: progressNone},
		{name: "written without worked", after: parsed(taskStatus{Summary: "x"}),
			mode: modeIterative, withdrawn: true, progress: progressUnsaid},
		{name: "stale complete", before: parsed(taskStatus{Complete: true}), after: parsed(taskStatus{Complete: true}),
			mode: modeLoop, progress: progressNone},
		{name: "stale complete accepted", start: parsed(taskStatus{Complete: true}), before: parsed(taskStatus{Complete: true}),
			after: parsed(taskStatus{Complete: true}), accept: true, mode: modeLoop, complete: true, madeProgress: true},
		{name: "accepted, not inherited", before: parsed(taskStatus{Complete: true}), after: parsed(taskStatus{Complete: true}),
			accept: true, mode: modeLoop},
		{name: "complete written", after: parsed(taskStatus{Complete: true}), mode: modeLoop,
			complete: true, madeProgress: true, withdrawn: true},
		{name: "complete written, failed", after: parsed(taskStatus{Complete: true}), failed: true, mode: modeLoop,
			withdrawn: true},
		{name: "stale progress", before: parsed(taskStatus{HasProgress: true, Completed: 3}),
			after: parsed(taskStatus{HasProgress: true, Completed: 3}), best: 2, mode: modeLoop, progress: progressNone},
		{name: "progress written, no rise", before: parsed(taskStatus{HasProgress: true, Completed: 2}),
			after: rewritten(taskStatus{HasProgress: true, Completed: 2}), best: 2, mode: modeLoop, withdrawn: true, progress: progressNone},
		{name: "progress rise written", before: parsed(taskStatus{HasProgress: true, Completed: 2}),
			after: rewritten(taskStatus{HasProgress: true, Completed: 3}), best: 2, mode: modeLoop,
			madeProgress: true, withdrawn: true, progress: progressMade},
		{name: "question asked", after: parsed(taskStatus{Question: " Which? "}), mode: modeLoop, question: "Which?"},
		{name: "question left in a rewrite", before: parsed(taskStatus{Question: "Which?"}),
			after: rewritten(taskStatus{Question: "Which?", Summary: "more"}), mode: modeLoop, question: "Which?", leftIn: true},
		{name: "question left, not written", before: parsed(taskStatus{Question: "Which?"}),
			after: parsed(taskStatus{Question: "Which?"}), mode: modeLoop},
		{name: "question changed", before: parsed(taskStatus{Question: "Which?"}),
			after: rewritten(taskStatus{Question: "Where?"}), mode: modeLoop, question: "Where?"},
		{name: "invalid file written", after: statusCopy{exists: true, size: 3}, mode: modeIterative, progress: progressNone},
		{name: "failed, nothing written", failed: true, mode: modeIterative, progress: progressUnsaid},
		{name: "failed, nothing written, loop", failed: true, mode: modeLoop, progress: progressNone},
		{name: "failed, worked false written", after: parsed(taskStatus{Worked: &no}), failed: true,
			mode: modeIterative, worked: &no, withdrawn: true, progress: progressNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l statusLedger
			l.begin("", tt.start, tt.accept)
			ts := tt.after.status
			e := l.judge(tt.before, tt.after, ts)
			if tt.failed {
				e.fail()
			}
			if e.complete != tt.complete {
				t.Errorf("complete = %v; want %v", e.complete, tt.complete)
			}
			if got := e.madeProgress(tt.best); got != tt.madeProgress {
				t.Errorf("madeProgress(%d) = %v; want %v", tt.best, got, tt.madeProgress)
			}
			if (e.worked == nil) != (tt.worked == nil) || (e.worked != nil && *e.worked != *tt.worked) {
				t.Errorf("worked = %v; want %v", e.worked, tt.worked)
			}
			if e.question != tt.question || e.leftIn != tt.leftIn || e.withdrawn != tt.withdrawn {
				t.Errorf("question, leftIn, withdrawn = %q, %v, %v; want %q, %v, %v", e.question, e.leftIn, e.withdrawn, tt.question, tt.leftIn, tt.withdrawn)
			}
			if got := e.progress(tt.mode, tt.best); got != tt.progress {
				t.Errorf("progress(%s, %d) = %d; want %d", tt.mode, tt.best, got, tt.progress)
			}
		})
	}
}

func TestEvidenceTODOProgress(t *testing.T) {
	var l statusLedger
	e := l.judge(statusCopy{}, statusCopy{}, taskStatus{HasProgress: true, Completed: 2, Total: 3, Source: todoFile})
	if !e.rose(1) || e.rose(2) {
		t.Errorf("rose of TODO.md's 2/3 over 1, 2 = %v, %v; want true, false", e.rose(1), e.rose(2))
	}
}

func TestReadRegularFileInfo(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 4095, 4096, 70000} {
		path := filepath.Join(dir, "f")
		want := make([]byte, size)
		for i := range want {
			want[i] = byte('a' + i%26)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, fi, err := readRegularFileInfo(path, 1<<20)
		if err != nil || string(got) != string(want) || fi.Size() != int64(size) {
			t.Errorf("readRegularFileInfo of %d bytes = %d bytes, %v", size, len(got), err)
		}
		if want, err := os.Stat(path); err != nil || fi == nil || !fi.ModTime().Equal(want.ModTime()) || fi.Sys().(*syscall.Stat_t).Ino != want.Sys().(*syscall.Stat_t).Ino || !fi.Mode().IsRegular() {
			t.Errorf("readRegularFileInfo's stat %+v is not os.Stat's %+v", fi, want)
		}
		if _, _, err := readRegularFileInfo(path, int64(size)-1); size > 0 && err == nil {
			t.Errorf("readRegularFileInfo of %d bytes, capped at %d: no error", size, size-1)
		}
	}
	if _, _, err := readRegularFileInfo(dir, 1<<20); err == nil {
		t.Errorf("readRegularFileInfo of a directory: no error")
	}
}
