package main

// This file implements the graceful stop request. The rules are: a stop
// request ends a run after the current iteration, never in the middle of one.
// It comes from the .stop file (written by 'claude-iterate stop' or touched by
// hand) or from the s key; pressing s again cancels either. The file is never
// followed through a symbolic link, and the run deletes it when it ends.
// Anything there but a regular file (a symbolic link, dangling or not, a
// FIFO, a directory) is no request: it is an error naming the path and what
// is there, never removed by the tool; a run that finds one there says so
// once, as 'stop' cannot reach it while it is there.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// writeStopFile creates the stop request. A symbolic link in its place is
// refused, not followed: the file's content must not land somewhere else.
func writeStopFile(path string) error {
	if err := makeDirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeStopRequest(path)
}

// writeStopRequest is writeStopFile in a directory that must be there: a
// dry run's scratch copy, removed when the dry run ends, is not made again.
func writeStopRequest(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("refusing to write %s: it is a symbolic link", path)
	}
	content := fmt.Sprintf("Stop requested at %s\n", time.Now().UTC().Format(time.RFC3339))
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

// stopFileExists reports whether a stop was requested through the file: a
// regular file is there (its presence is the request; it is never read).
func stopFileExists(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && isStopRequest(fi)
}

// isStopRequest reports whether fi, from Lstat, can be a stop request: a
// regular file, as 'stop' and touch make, not a link (tryout4: a link
// counted, a FIFO or a directory did not).
func isStopRequest(fi os.FileInfo) bool {
	return fi.Mode().IsRegular()
}

// checkStopPath reports an error when something that cannot be a stop
// request (a directory, a FIFO) sits where the stop file goes.
func checkStopPath(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || isStopRequest(fi) {
		return nil
	}
	kind := fileKind(fi)
	if target, err := os.Readlink(path); err == nil {
		kind += " to " + target
	}
	return fmt.Errorf("%s is %s, not a stop request", path, kind)
}

// stopFilePollInterval is how often a running run looks for the stop file,
// so that the request shows within a second; it is always checked at an
// iteration's end too.
const stopFilePollInterval = time.Second

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
	// blocked is told, once each time it appears, of something at path
	// that is no stop request (a directory, a FIFO, a link): while it is
	// there, 'claude-iterate stop' cannot reach the run (tryout5).
	blocked     func(err error)
	blockedSeen bool
}

// poll notices the stop file appearing or disappearing, at most once per
// stopFilePollInterval unless now is set.
func (s *stopRequest) poll(now bool) {
	if !now && time.Since(s.lastPoll) < stopFilePollInterval {
		return
	}
	s.lastPoll = time.Now()
	fi, err := os.Lstat(s.path)
	s.noticeBlocked(err == nil && !isStopRequest(fi))
	exists := err == nil && isStopRequest(fi) && s.ours()
	switch {
	case exists && s.source == "":
		s.set(stopByFile)
	case !exists && s.source == stopByFile:
		s.set("")
	}
}

// noticeBlocked tells blocked of something that is no stop request at the
// stop file's path (there), the first time it is seen there.
func (s *stopRequest) noticeBlocked(there bool) {
	if !there || !s.ours() {
		s.blockedSeen = false
		return
	}
	if s.blockedSeen {
		return
	}
	s.blockedSeen = true
	if err := checkStopPath(s.path); err != nil && s.blocked != nil {
		s.blocked(err)
	}
}

// stopBlockedWarning is what a run says, once, when what sits at its stop
// file (err names it) keeps 'claude-iterate stop' from reaching it: how to
// remove it, and what stops the run meanwhile (s and Ctrl+C when sup
// reads the keyboard). It is never removed here: the agent or the user
// made it.
func stopBlockedWarning(con *console, log *runLog, sup *supervisor, ws *workspace, root string) func(err error) {
	return func(err error) {
		meanwhile := "Ctrl+C in its terminal or kill -INT " + strconv.Itoa(os.Getpid())
		if sup.kb != nil {
			meanwhile = "s or Ctrl+C here"
		}
		shown := relPath(root, ws.stopPath())
		con.errorf("warning: %v: %s cannot reach this run while it is there", err, wsCommand(ws, "stop"))
		con.errorf("hint: remove it (%s), then stop works again; meanwhile %s still stop the run", removeCommand(ws.stopPath(), shown), meanwhile)
		log.printf("WARNING: %v: stop requests by file cannot reach this run while it is there", err)
	}
}

// stopBlocked is the error of a stop asked while err's thing that is no
// stop request sits at the stop file's path (shown as shown) and the run
// of pid goes on: it cannot be reached by file until that is removed;
// again is what to do then. Nothing is removed here.
func stopBlocked(err error, path, shown string, pid int, again string) error {
	err = fmt.Errorf("%w: the run going on (pid %d) cannot be asked to stop by file while it is there", err, pid)
	return withHint(err, "remove it yourself (%s), then %s; meanwhile s or Ctrl+C in the run's terminal still stop it", removeCommand(path, shown), again)
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

// Sources of a stop request.
const (
	stopByKeyboard = "keyboard"
	stopByFile     = "file"
)
