package main

// This file implements the stop command: a graceful stop asked of a
// workspace's run from another shell, or cancelled (--cancel). The stop
// request itself, the .stop file and the s key, is stopfile.go's.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// stopUsage is the manual of the stop command.
const stopUsage = `Usage: claude-iterate stop [<workspace>] [--cancel]

Asks the run of a workspace to stop after its current iteration, by creating
<workspace>/.stop (the same as pressing s in the run's terminal, or touch-ing
the file). The run ends with "stopped: stop requested (file)", exit 0, and
deletes the file; a run waiting between iterations (the delay, a usage
limit's reset) stops at once. If no run is going on, the next run stops after its first
iteration; but if the last run was killed (kill -9) and left processes of
its agent running, stop ends them instead, as the next run would. Without <workspace>, stops the ralph-mode run ('run --prompt') of
the current directory.

A dry run of the workspace ('run --dry-run') going on while no real run is
is asked instead, in its scratch copy: the workspace gets no .stop, and its
next run no stop request.

Options:
  --cancel   withdraw the request (delete .stop), and a dry run's; a
             stop asked with the s key is cancelled by s in the run's
             terminal only (exit 1)

Exit status: 0 asked (--cancel: withdrawn, or none to withdraw); 1 error,
or --cancel of a stop asked with s (not withdrawn); 2 usage error.

Examples:
  claude-iterate stop demo
  claude-iterate stop demo --cancel
  claude-iterate stop                # the ralph-mode run in this directory
`

func runStop(env *cliEnv, args []string) error {
	fs := newFlagSet("stop")
	cancel := fs.Bool("cancel", false, "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	w, err := stopTarget(env, pos)
	if err != nil {
		return err
	}
	label := wsLabel(w, pos)
	path := w.stopPath()
	shown := relPath(env.projectRoot, path)
	byHand := "touch " + shellQuote(shown)
	if err := checkStopPath(path); err != nil {
		if pid := w.runningPID(); pid != 0 && !*cancel {
			return stopBlocked(err, path, shown, pid, "ask again: "+stopCommand(pos))
		}
		return withHint(err, "remove it yourself, then try again, or stop the run by hand: %s; %s", removeCommand(path, shown), byHand)
	}
	dry := dryRunOnly(w)
	if *cancel {
		return cancelStop(env, w, label, path, shown, dry)
	}
	if len(dry) > 0 {
		return stopDryRuns(env, label, pos, dry)
	}
	if w.runningPID() == 0 && endKilledRun(env.stdout, w, label) {
		return nil // no run to stop: a .stop would stop the next one
	}
	if err := writeStopFile(path); err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return withHint(err, "remove it yourself, then try again, or stop the run by hand: rm %s; %s", shellQuote(shown), byHand)
		}
		return withHint(err, "stop the run by hand: %s", byHand)
	}
	fmt.Fprintf(env.stdout, "Stop signal sent to workspace: %s\n", label)
	if pid := w.runningPID(); pid != 0 {
		fmt.Fprintf(env.stdout, "%s\n", stopWhen(pid, w.statePath()))
	} else {
		fmt.Fprintf(env.stdout, "No run is going on: the next run will stop after its first iteration\n")
	}
	fmt.Fprintf(env.stdout, "\nTo cancel: %s (or rm %s)\n", cancelCommand(pos), shellQuote(shown))
	return nil
}

// stopWhen says when the run of pid, whose state file is state, stops
// once asked: a wait (the delay between iterations, a usage limit's, for
// an answer) ends at once, with no other iteration; an iteration is let
// finish.
func stopWhen(pid int, state string) string {
	st, err := readRunState(state)
	if err == nil && st.PID == pid && !st.Ended {
		switch st.Phase {
		case phaseLimit:
			return "The run is waiting for a usage limit's reset: the wait ends and the run stops now, without retrying the iteration"
		case phaseDelay:
			return "The run is waiting between iterations: the wait ends and the run stops now"
		case phaseQuestion:
			return "The run is waiting for an answer: the wait ends and the run stops now, without the answer"
		}
	}
	return "Workspace will stop after current iteration completes"
}

// cancelStop withdraws the stop requests of the workspace w, whose stop
// file is path (shown as shown), and of its dry runs going on, dry. A stop
// asked with the s key is no file: only the run's terminal cancels it,
// which is said, exit 1.
func cancelStop(env *cliEnv, w *workspace, label, path, shown string, dry []runEntry) error {
	removed, err := removeStopFile(path)
	if err != nil {
		return withHint(err, "remove it by hand: %s", removeCommand(path, shown))
	}
	if removed {
		fmt.Fprintf(env.stdout, "Stop request cancelled for workspace: %s\n", label)
	}
	for _, e := range dry {
		p := filepath.Join(e.StateDir, stopFile)
		gone, err := removeStopFile(p)
		if err != nil {
			return withHint(err, "remove it by hand: rm %s", shellQuote(p))
		}
		if gone {
			fmt.Fprintf(env.stdout, "Stop request cancelled for the dry run of workspace: %s (pid %d)\n", label, e.PID)
			removed = true
		}
	}
	if removed {
		return nil
	}
	// The runs going on, and their state files, which name a key's stop.
	pids, states := []int{w.runningPID()}, []string{w.statePath()}
	for _, e := range dry {
		pids, states = append(pids, e.PID), append(states, e.State)
	}
	for i, pid := range pids {
		if keyStopped(pid, states[i]) {
			return withHint(fmt.Errorf("cannot cancel the stop of workspace %s from here: it was asked with the s key in the run's terminal (pid %d)", label, pid),
				"press s in that terminal to cancel it")
		}
	}
	fmt.Fprintf(env.stdout, "No stop was requested for workspace: %s\n", label)
	return nil
}

// stopDryRuns asks the dry runs dry of the workspace (named as the user
// did, pos) to stop after their iteration: a .stop in each one's scratch
// copy, never in the workspace, whose next real run would obey it. A copy
// gone meanwhile is a dry run that ended; it is not made again.
func stopDryRuns(env *cliEnv, label string, pos []string, dry []runEntry) error {
	asked := 0
	for _, e := range dry {
		err := writeStopRequest(filepath.Join(e.StateDir, stopFile))
		switch {
		case errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(env.stdout, "The dry run of workspace %s (pid %d) has ended: nothing to stop\n", label, e.PID)
			continue
		case err != nil:
			return withHint(err, "end the dry run with: kill %d", e.PID)
		}
		asked++
		fmt.Fprintf(env.stdout, "Stop signal sent to the dry run of workspace: %s (pid %d)\n", label, e.PID)
		fmt.Fprintf(env.stdout, "The dry run will stop after its current iteration completes\n")
		fmt.Fprintf(env.stdout, "It works on a scratch copy (%s): the workspace itself gets no stop request\n", e.StateDir)
	}
	if asked > 0 {
		fmt.Fprintf(env.stdout, "\nTo cancel: %s\n", cancelCommand(pos))
	}
	return nil
}

// stopCommand is the command that requests a stop of the workspace given
// as pos (none: the ralph-mode run).
func stopCommand(pos []string) string {
	if len(pos) == 1 {
		return "claude-iterate stop " + shellQuote(pos[0])
	}
	return "claude-iterate stop"
}

// cancelCommand is the command that withdraws a stop request of the
// workspace given as pos (none: the ralph-mode run).
func cancelCommand(pos []string) string {
	if len(pos) == 1 {
		return "claude-iterate stop " + shellQuote(pos[0]) + " --cancel"
	}
	return "claude-iterate stop --cancel"
}

// stopTarget finds the workspace to stop. stop is the emergency path: it
// works whatever the config files say — a broken one is left out with a
// warning (workspacesDirLenient), and so is a broken .metadata.json, as
// the stop file needs only the directory. Its errors say how to stop the
// run by hand.
func stopTarget(env *cliEnv, pos []string) (*workspace, error) {
	var w *workspace
	if len(pos) == 0 || ralphDot(env, pos[0]) {
		w = ralphWorkspace(env.projectRoot)
	} else {
		dir, warn := workspacesDirLenient(env)
		warnConfig(env, warn)
		var err error
		if w, err = locateWorkspace(env.projectRoot, dir, pos[0]); err != nil {
			return nil, err
		}
	}
	if err := linkedWorkspace(env, w); err != nil {
		return nil, err // no stop file written through it
	}
	byHand := "touch " + shellQuote(relPath(env.projectRoot, w.stopPath()))
	err := loadWorkspace(env, w, true)
	switch {
	case err == nil:
		warnSettings(env, w) // the stop file needs none of them
		return w, nil
	case errors.Is(err, os.ErrNotExist) && w.Ralph && len(liveDryRuns(w.StateDir)) > 0:
		return w, nil // a ralph-mode dry run's: it writes nothing here
	case errors.Is(err, os.ErrNotExist) && w.Ralph:
		return nil, errNoRalphWorkspace()
	case errors.Is(err, os.ErrNotExist):
		// No workspace, no run to stop: touching its .stop would create
		// nothing a run reads; the name is what to check.
		nw := &errNoWorkspace{arg: pos[0], dir: relPath(env.projectRoot, w.StateDir)}
		if !isWorkspacePath(pos[0]) {
			dir, _ := workspacesDirLenient(env)
			nw.near = closestName(pos[0], namedWorkspaces(env.projectRoot, dir))
		}
		return nil, withHint(nw, "check the name with: claude-iterate list")
	}
	if fi, serr := os.Stat(w.StateDir); serr != nil || !fi.IsDir() {
		return nil, withHint(err, "stop the run by hand: %s", byHand)
	}
	fmt.Fprintf(env.stderr, "%s: warning: %v (stopping anyway)\n", progName, err)
	return w, nil
}
