package main

// This file implements the graceful stop. The rules are: a stop
// request ends a run after the current iteration, never in the middle of one.
// It comes from the .stop file (written by 'claude-iterate stop' or touched by
// hand) or from the s key; pressing s again cancels either. The file is never
// followed through a symbolic link, and the run deletes it when it ends.
// Anything there but a regular file or a symbolic link (a directory) is no
// request: it is an error naming the path, never removed by the tool.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// stopUsage is the manual of the stop command.
const stopUsage = `Usage: claude-iterate stop [<workspace>] [--cancel]

Asks the run of a workspace to stop after its current iteration, by creating
<workspace>/.stop (the same as pressing s in the run's terminal, or touch-ing
the file). The run ends with "stopped: stop requested (file)", exit 0, and
deletes the file. If no run is going on, the next run stops after its first
iteration. Without <workspace>, stops the ralph-mode run ('run --prompt') of
the current directory.

Options:
  --cancel   withdraw the request (delete .stop)

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
	label := w.Name
	if len(pos) == 1 {
		label = pos[0]
	}
	path := w.stopPath()
	shown := relPath(env.projectRoot, path)
	byHand := "touch " + shellQuote(shown)
	if err := checkStopPath(path); err != nil {
		return withHint(err, "remove it yourself, then try again, or stop the run by hand: rm %s; %s", shellQuote(shown), byHand)
	}
	if *cancel {
		removed, err := removeStopFile(path)
		if err != nil {
			return withHint(err, "remove it by hand: rm %s", shellQuote(shown))
		}
		if removed {
			fmt.Fprintf(env.stdout, "Stop request cancelled for workspace: %s\n", label)
		} else {
			fmt.Fprintf(env.stdout, "No stop was requested for workspace: %s\n", label)
		}
		return nil
	}
	if err := writeStopFile(path); err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return withHint(err, "remove it yourself, then try again, or stop the run by hand: rm %s; %s", shellQuote(shown), byHand)
		}
		return withHint(err, "stop the run by hand: %s", byHand)
	}
	fmt.Fprintf(env.stdout, "Stop signal sent to workspace: %s\n", label)
	if w.runningPID() != 0 {
		fmt.Fprintf(env.stdout, "Workspace will stop after current iteration completes\n")
	} else {
		fmt.Fprintf(env.stdout, "No run is going on: the next run will stop after its first iteration\n")
	}
	fmt.Fprintf(env.stdout, "\nTo cancel: %s (or rm %s)\n", cancelCommand(pos), shellQuote(shown))
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
	if len(pos) == 0 {
		w = ralphWorkspace(env.projectRoot)
	} else {
		dir, warn := workspacesDirLenient(env)
		warnConfig(env, warn)
		var err error
		if w, err = locateWorkspace(env.projectRoot, dir, pos[0]); err != nil {
			return nil, err
		}
	}
	byHand := "touch " + shellQuote(relPath(env.projectRoot, w.stopPath()))
	err := loadWorkspace(env, w, true)
	switch {
	case err == nil:
		return w, nil
	case errors.Is(err, os.ErrNotExist) && len(pos) == 0:
		return nil, usagef("missing workspace (and no ralph-mode run in this directory: no %s)", filepath.Join(ralphStateDir, metadataFile))
	case errors.Is(err, os.ErrNotExist):
		return nil, withHint(&errNoWorkspace{arg: pos[0], dir: relPath(env.projectRoot, w.StateDir)}, "check the name with: claude-iterate list; a run's stop request is the file <workspace>/.stop (%s)", byHand)
	}
	if fi, serr := os.Stat(w.StateDir); serr != nil || !fi.IsDir() {
		return nil, withHint(err, "stop the run by hand: %s", byHand)
	}
	fmt.Fprintf(env.stderr, "%s: warning: %v (stopping anyway)\n", progName, err)
	return w, nil
}

// writeStopFile creates the stop request. A symbolic link in its place is
// refused, not followed: the file's content must not land somewhere else.
func writeStopFile(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("refusing to write %s: it is a symbolic link", path)
	}
	content := fmt.Sprintf("Stop requested at %s\n", time.Now().UTC().Format(time.RFC3339))
	if err := makeDirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPathError(err))
	}
	return nil
}

// removeStopFile deletes the stop request (a symbolic link is removed
// itself), reporting whether there was one.
func removeStopFile(path string) (bool, error) {
	if err := checkStopPath(path); err != nil {
		return false, err
	}
	err := os.Remove(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("removing %s: %w", path, unwrapPathError(err))
}

// stopFileExists reports whether a stop was requested through the file. A
// symbolic link counts: the request is its presence, and it is never read.
func stopFileExists(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && isStopRequest(fi)
}

// isStopRequest reports whether fi, from Lstat, can be a stop request: a
// regular file or a symbolic link.
func isStopRequest(fi os.FileInfo) bool {
	return fi.Mode().IsRegular() || fi.Mode()&os.ModeSymlink != 0
}

// checkStopPath reports an error when something that cannot be a stop
// request (a directory, a FIFO) sits where the stop file goes.
func checkStopPath(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || isStopRequest(fi) {
		return nil
	}
	return fmt.Errorf("%s is %s, not a stop request", path, fileKind(fi))
}

// stopFilePollInterval is how often a running run looks for the stop file,
// so that the request shows within a second; it is always checked at an
// iteration's end too.
const stopFilePollInterval = time.Second

// Sources of a stop request.
const (
	stopByKeyboard = "keyboard"
	stopByFile     = "file"
)

// stopRequest is a run's graceful-stop state.
type stopRequest struct {
	path string // the workspace's stop file
	// ws is the run's workspace: the stop file of a directory put in the
	// place of the one the run locked is another run's (workspacePresent).
	ws *workspace
	// source is stopByKeyboard or stopByFile while a stop is requested,
	// else "".
	source   string
	lastPoll time.Time
	// changed is told of every change, to show and log it.
	changed func(source string)
}

// poll notices the stop file appearing or disappearing, at most once per
// stopFilePollInterval unless now is set.
func (s *stopRequest) poll(now bool) {
	if !now && time.Since(s.lastPoll) < stopFilePollInterval {
		return
	}
	s.lastPoll = time.Now()
	exists := stopFileExists(s.path) && s.ours()
	switch {
	case exists && s.source == "":
		s.set(stopByFile)
	case !exists && s.source == stopByFile:
		s.set("")
	}
}

// key handles a key press: s or S toggles the request, cancelling a file's
// request by deleting the file.
func (s *stopRequest) key(k byte) {
	if k != 's' && k != 'S' {
		return
	}
	if s.source == "" {
		s.set(stopByKeyboard)
		return
	}
	if s.source == stopByFile && s.ours() {
		removeStopFile(s.path)
	}
	s.set("")
}

// ours reports whether the stop file's directory is still the run's own:
// not deleted, nor replaced by another directory.
func (s *stopRequest) ours() bool {
	return s.ws == nil || workspacePresent(s.ws) == nil
}

func (s *stopRequest) set(source string) {
	s.source = source
	if s.changed != nil {
		s.changed(source)
	}
}
