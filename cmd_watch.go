package main

// This file implements the watch command: the live panel of a run in
// progress, from another shell. The rules are: it only reads — the run's
// state file (runstate.go) and .metadata.json — so it can never disturb the
// run, and Ctrl+C ends the watch, not the run; it follows the run until the
// state file says the run ended, then prints the run's last line and exits
// with the run's exit status; a run that vanished without ending (SIGKILL,
// a crash) is said to have done so, exit 1; with no run in progress it says
// so, shows how the last run ended, and exits 1. On a terminal it draws the
// panel, elsewhere plain lines.

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// watchPoll is how often watch looks at the state file.
const watchPoll = 250 * time.Millisecond

// watchUsage is the manual of the watch command.
const watchUsage = `Usage: claude-iterate watch [<workspace>]
       claude-iterate watch --all

Shows the live panel of a run in progress, from another shell (or after
'nohup claude-iterate run … &'): its state, iterations, elapsed time, what
the agent is doing now, tasks, cost and any stop request, with the run's
progress lines above it (without colours under NO_COLOR). Not on a
terminal (or with TERM=dumb), plain lines. Without <workspace>, watches the
ralph-mode run of the current directory. With no real run going on, a dry
run of the workspace ('run --dry-run', on its scratch copy) is watched, and
said to be.

watch follows the run until it ends, then prints the run's last line and
exits with the run's exit status. Ctrl+C ends the watch and leaves the run
alone; to stop the run after its current iteration, use
'claude-iterate stop <workspace>'.

With no run in progress, watch says so, shows how the last run ended, and
exits 1.

Exit status: the run's (0, 1; 129, 130, 131 or 143 when it ended by SIGHUP,
SIGINT, SIGQUIT or SIGTERM); 1 when no run is in progress or the run ended
without saying how (killed with SIGKILL); 130 after Ctrl+C (129 or 143
when the watch itself gets SIGHUP or SIGTERM).

With --all, watches every run going on on this machine, in every project:
ps's table, live, full screen, the runs waiting for an answer first (in
a small window, a last line says how many more are above and below). The
keys: up and down (or k and j) select a run; Enter opens its panel, as
'watch <workspace>' shows it, and Esc comes back; s asks the selected run
to stop after its iteration, and s again cancels that; a answers its
question in a one-line editor (Enter sends, Esc cancels); q quits.
Leaving never touches a run. Without a terminal (or with TERM=dumb), it
prints ps's table once and exits.

Examples:
  claude-iterate watch demo
  claude-iterate watch --all
  nohup claude-iterate run demo > run.out 2>&1 & claude-iterate watch demo
`

func runWatch(env *cliEnv, args []string) error {
	fs := newFlagSet("watch")
	all := fs.Bool("all", false, "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if *all {
		if len(pos) > 0 {
			return usagef("--all watches every run: give no workspace with it")
		}
		return runWatchAll(env)
	}
	w, warn, err := lookAtWorkspace(env, pos)
	var dry []runEntry
	if err != nil {
		if w, dry, err = orRalphDryRun(env, pos, err); err != nil {
			return err
		}
	}
	pid, path := w.runningPID(), w.statePath()
	if pid == 0 && dry == nil {
		dry = dryRunOnly(w)
	}
	if pid == 0 && len(dry) > 0 {
		e := dry[len(dry)-1]
		pid, path = e.PID, e.State
		if d := holdScratch(e); d != nil {
			defer d.Close()
		}
		fmt.Fprintf(env.stderr, "%s: watching the dry run of %s (pid %d), %s: the workspace is left unchanged\n", progName, w.Name, pid, scratchOf(e))
	}
	warnConfig(env, warn) // as every command that does not need the settings
	if pid == 0 {
		fmt.Fprintf(env.stderr, "%s: no run of %s in progress\n", progName, w.Name)
		if last := lastEnding(w); last != "" {
			fmt.Fprintf(env.stdout, "Last run: %s\n", last)
		} else {
			fmt.Fprintf(env.stdout, "No run yet: %s\n", wsCommand(w, "run"))
		}
		return &exitCodeError{code: exitError}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	con := newConsole(env.stdout, env.stderr, outputProgress)
	defer con.settle()
	con.drawAtOnce()
	v := &watcher{con: con, path: path, pid: pid, stopCmd: stopCommand(pos), cancelCmd: cancelCommand(pos)}
	defer con.dropPanel()
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	for {
		if done, err := v.step(time.Now()); done {
			return err
		}
		select {
		case sig := <-sigs:
			con.dropPanel()
			fmt.Fprintf(env.stderr, "Stopped watching; the run (pid %d) goes on.\n", pid)
			return &exitCodeError{code: exitCodeFor(sig)}
		case <-tick.C:
		}
	}
}

// lastEnding says how the workspace's last run ended, or "". A run that
// died without cleaning up (kill -9) is said to, as status does: its state
// file never says it ended, and an older run's ending is not its own.
func lastEnding(w *workspace) string {
	if w.displayStatus() == statusKilled {
		s := fmt.Sprintf("%s (pid %d was killed, or it crashed, without saying how it ended)", statusKilled, w.meta.PID)
		if left := leftPIDs(w); len(left) > 0 {
			s += "; " + leftText("it", left, wsCommand(w, "stop"))
		}
		return s
	}
	if st, err := readRunState(w.statePath()); err == nil && st.Ended && st.Ending != "" {
		return fmt.Sprintf("%s, exit %d", sanitizeString(st.Ending), st.ExitCode)
	}
	if m := w.meta; m.LastStopReason != "" {
		return fmt.Sprintf("%s, exit %d", m.LastStopReason, derefInt(m.LastExitCode))
	}
	return ""
}

// watcher follows one run's state file.
type watcher struct {
	con     *console
	path    string
	pid     int
	seen    fileStamp
	st      *runState
	lastSeq int
	// waitedSince: the state file is not (yet) this run's.
	waitedSince time.Time
	told        bool
	lastDraw    time.Time
	lastAlive   time.Time
	// stopCmd and cancelCmd stop the run and withdraw that, from here:
	// the run's own lines name its s key, which is not this terminal's.
	stopCmd, cancelCmd string
}

// Lines of a run that has a keyboard, which watch rewords (loop.go writes
// them).
const (
	runKeysHint   = "; press s to stop after the current iteration"
	runKeysHintBg = "; fg, then press s to stop after the current iteration"
	runStopByKeys = "Stop requested (press s to cancel)"
)

// reword says in a run's line what to do from watch's terminal instead of
// the run's s key.
func (v *watcher) reword(line string) string {
	for _, hint := range []string{runKeysHint, runKeysHintBg} {
		if rest, ok := strings.CutSuffix(line, hint); ok {
			return rest + "; " + v.stopCmd + " to stop after the current iteration"
		}
	}
	if line == runStopByKeys {
		return "Stop requested (" + v.cancelCmd + " to cancel)"
	}
	return line
}

// step looks at the state file and the run and shows what is new; once
// the run ended, done is set and err is the watch's end.
func (v *watcher) step(now time.Time) (done bool, err error) {
	if s := stampOf(v.path); s != v.seen {
		if st, err := readRunState(v.path); err == nil {
			v.seen = s
			if st.PID == v.pid {
				v.show(st)
			}
		}
	}
	if v.st != nil && v.st.Ended {
		return true, v.end()
	}
	if now.Sub(v.lastAlive) >= time.Second {
		v.lastAlive = now
		if !processAlive(v.pid) {
			// It may have ended between the two looks.
			if st, err := readRunState(v.path); err == nil && st.PID == v.pid && st.Ended {
				v.show(st)
				return true, v.end()
			}
			v.con.dropPanel()
			v.con.errorf("the run (pid %d) ended without saying how: killed, or it crashed", v.pid)
			return true, &exitCodeError{code: exitError}
		}
	}
	if v.st == nil {
		if v.waitedSince.IsZero() {
			v.waitedSince = now
		} else if !v.told && now.Sub(v.waitedSince) >= 3*time.Second {
			v.told = true
			v.con.noticef("waiting for the run (pid %d) to write %s", v.pid, v.path)
		}
		return false, nil
	}
	if now.Sub(v.lastDraw) >= redrawInterval || v.con.takeResized() {
		v.draw(now)
	}
	return false, nil
}

// show takes a new state: the lines not shown yet, and the panel.
func (v *watcher) show(st *runState) {
	first := v.st == nil
	v.st = st
	for _, l := range st.Lines {
		if l.Seq <= v.lastSeq {
			continue
		}
		v.lastSeq = l.Seq
		if first && l.Seq < st.Lines[len(st.Lines)-1].Seq-4 {
			continue // the context: the last few lines only
		}
		v.con.progressf("%s", v.reword(l.Text))
	}
	if !st.Ended {
		v.draw(time.Now())
	}
}

// draw shows the panel (on a terminal).
func (v *watcher) draw(now time.Time) {
	v.lastDraw = now
	if !v.con.panelWanted() || v.st == nil {
		return
	}
	v.con.refreshForeground()
	v.con.setPanel(renderPanel(v.st, now, panelOpts{width: v.con.termWidth(), color: v.con.color, watch: true, cancel: v.cancelCmd}))
}

// end prints the run's last line and returns its exit status.
func (v *watcher) end() error {
	v.con.dropPanel()
	st := v.st
	v.con.errorf("%s", st.Ending)
	if st.ExitCode == exitOK {
		return nil
	}
	if st.Hint != "" {
		v.con.errorf("hint: %s", st.Hint)
	}
	return &exitCodeError{code: st.ExitCode}
}
