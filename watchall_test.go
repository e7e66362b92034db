package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStateOf: each phase of a run's state file is one of ps's states; a
// stop request or an interrupt is stopping, whatever the phase; an ending
// is the status the run ended with.
func TestStateOf(t *testing.T) {
	for _, c := range []struct {
		st   runState
		stop bool
		want string
	}{
		{runState{Phase: phaseStarting}, false, runStateRunning},
		{runState{Phase: phaseRunning}, false, runStateRunning},
		{runState{Phase: phaseBetween}, false, runStateRunning},
		{runState{Phase: phaseQuestion}, false, runStateWaiting},
		{runState{Phase: phaseLimit}, false, runStateLimit},
		{runState{Phase: phaseVerify}, false, runStateVerifying},
		{runState{Phase: phaseDelay}, false, runStateDelay},
		{runState{Phase: phaseRunning}, true, runStateStopping},
		{runState{Phase: phaseQuestion}, true, runStateStopping},
		{runState{Phase: phaseRunning, Interrupted: "SIGINT"}, false, runStateStopping},
		// ended, in its last moments: the status it ended with (a state
		// file of an older version: by its exit code)
		{runState{Phase: phaseEnded, Ended: true, Status: statusCompleted}, true, statusCompleted},
		{runState{Phase: phaseEnded, Ended: true, Status: statusFailed, Interrupted: "SIGINT"}, false, statusFailed},
		{runState{Phase: phaseEnded, Ended: true}, false, statusStopped},
		{runState{Phase: phaseEnded, Ended: true, ExitCode: exitError}, false, statusFailed},
		{runState{Phase: phaseEnded, Ended: true, ExitCode: 130, Interrupted: "SIGINT"}, false, statusInterrupted},
	} {
		if got := stateOf(&c.st, c.stop); got != c.want {
			t.Errorf("stateOf(phase %s, stop %v, interrupted %q, ended %v) = %s; want %s", c.st.Phase, c.stop, c.st.Interrupted, c.st.Ended, got, c.want)
		}
	}
}

// TestWatchAllFits: every line of watch --all, in each view, fits the
// terminal from 40 to 200 columns, with and without colour, and keeps the
// workspace and state columns.
func TestWatchAllFits(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", fakeRegistry(t, t.TempDir(), 20))
	runs, err := liveRuns("")
	if err != nil || len(runs) != 20 {
		t.Fatalf("liveRuns: %d runs, %v", len(runs), err)
	}
	q := "Which database: PostgreSQL or SQLite? " + strings.Repeat("漢字 ", 40)
	runs[3].Question, runs[3].State = &q, runStateWaiting
	now := time.Now()
	for _, color := range []bool{false, true} {
		for cols := 40; cols <= 200; cols++ {
			for _, view := range []int{viewTable, viewAnswer, viewPanel} {
				a := &allWatcher{runs: runs, selID: runs[3].ID, view: view, color: color, edit: []byte(strings.Repeat("é", 300)),
					msg: "Stop requested for " + strings.Repeat("w", 300)}
				if view == viewPanel {
					a.panel, _ = readRunState(runs[3].entry.State)
				}
				lines := a.render(now, cols, 30)
				if len(lines) > 30 {
					t.Errorf("%d columns, view %d: %d lines on 30 rows", cols, view, len(lines))
				}
				for _, l := range lines {
					if w := displayWidth(stripSGR(l)); w > cols-1 {
						t.Fatalf("%d columns, view %d, colour %v: a line of %d columns: %q", cols, view, color, w, l)
					}
				}
				if view == viewTable && !strings.Contains(strings.Join(lines, "\n"), runs[3].Workspace+"     waiting for an answer") {
					t.Fatalf("%d columns: no workspace and state:\n%s", cols, strings.Join(lines, "\n"))
				}
			}
		}
	}
}

// TestWatchAllMessageLife pins when watch --all's message goes: a plain
// confirmation after msgLife; one about a run when that run ends or
// another is selected; one kept (life 0) stays while its run is selected.
func TestWatchAllMessageLife(t *testing.T) {
	runs := []runView{{ID: "r1"}, {ID: "r2"}}
	now := time.Now()
	a := &allWatcher{runs: runs, selID: "r1"}
	a.say("r1", "Answer saved for r1", msgLife)
	if a.expireMsg(now.Add(msgLife - time.Second)); a.msg == "" {
		t.Fatalf("a confirmation went before msgLife")
	}
	if a.expireMsg(now.Add(msgLife + time.Second)); a.msg != "" {
		t.Fatalf("a confirmation stayed after msgLife: %q", a.msg)
	}
	a.say("r1", "Stop requested for r1", 0)
	if a.expireMsg(now.Add(time.Hour)); a.msg == "" {
		t.Fatalf("a message about the selected run going on went")
	}
	a.selID = "r2"
	if a.expireMsg(now); a.msg != "" {
		t.Fatalf("a message about r1 stayed with r2 selected: %q", a.msg)
	}
	a.selID = "r1"
	a.say("r1", "Stop requested for r1", 0)
	a.runs = runs[1:]
	if a.expireMsg(now); a.msg != "" {
		t.Fatalf("a message about r1 stayed after r1 ended: %q", a.msg)
	}
	a.say("", "The run ended: the answer is not saved", msgLife)
	if a.expireMsg(now); a.msg == "" {
		t.Fatalf("a message about no run went at once")
	}
}

// TestProjectNames pins the tables' project names: the folder's name
// unless another project going on ends with it; then the shortest tail
// that differs, or the whole path when another one ends with all of it.
func TestProjectNames(t *testing.T) {
	got := projectNames([]string{"/h/x1/app", "/h/x2/app/", "/h/x1/app", "/srv/other", "/app/api", "/b/app/api", "/"})
	want := map[string]string{"/h/x1/app": "x1/app", "/h/x2/app": "x2/app", "/srv/other": "other",
		"/app/api": "/app/api", "/b/app/api": "/b/app/api", "/": "/"}
	if len(got) != len(want) {
		t.Errorf("projectNames: %v, want %v", got, want)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("projectNames: %s named %q, want %q", p, got[p], w)
		}
	}
}

// TestFoldWords: a message folded to the width, never cut while the rows
// hold it; a word wider than the width clipped.
func TestFoldWords(t *testing.T) {
	for _, c := range []struct {
		text  string
		width int
		n     int
		want  []string
	}{
		{"terminal too small: 40×8 at least", 24, 5, []string{"terminal too small: 40×8", "at least"}},
		{"terminal too small: 40×8 at least", 11, 5, []string{"terminal", "too small:", "40×8 at", "least"}},
		{"terminal too small: 40×8 at least", 11, 2, []string{"terminal", "too small:"}},
		{"terminal too", 4, 3, []string{"ter…", "too"}},
	} {
		if got := foldWords(c.text, c.width, c.n); !slices.Equal(got, c.want) {
			t.Errorf("foldWords(%q, %d, %d) = %q, want %q", c.text, c.width, c.n, got, c.want)
		}
	}
}
