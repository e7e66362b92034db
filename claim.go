package main

// This file implements a command's claim of a workspace: the commands that
// change a workspace (config set --workspace, reset, archive, answer, ...)
// hold it while they do, so that a run that starts meanwhile fails at once,
// and two such commands take turns. The claim shares the state directory's
// lock, which a run holds alone for its whole life (lock.go).

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// claimWorkspace makes sure that no run holds w before a command changes
// it, and holds it until release is called: a run that starts meanwhile
// fails at once. arg is the workspace as the user gave it ("" for the
// ralph-mode one), for the hint, and doing is what the command does
// ("reset"). The claim shares the state directory's lock, which a run holds
// alone for its whole life, so a claim that gets it knows that no run holds
// the workspace; then it takes the run lock (.lock), waiting for another
// command's claim to end, so that two commands that change the workspace
// at once (two 'config set --workspace') take turns instead of taking one
// another for a run. The metadata is read again once the claim is held: a
// command changes it as the last one left it. The lock's record, which a
// later run reads to clean up after a killed one, is left as it is.
func claimWorkspace(w *workspace, arg, doing string) (release func(), err error) {
	busy := func(pid int) error {
		msg := fmt.Sprintf("cannot %s workspace %s: a run holds it", doing, w.Name)
		if pid > 0 {
			msg += fmt.Sprintf(" (pid %d)", pid)
		}
		return withHint(errors.New(msg), "stop the run first: %s", wsCommand(w, "stop"))
	}
	dir, err := openDir(w.StateDir)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, nil // no state directory yet: nothing to hold
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", w.StateDir, unwrapPathError(err))
	}
	if err := flock(dir, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		dir.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := 0
			if f, _, err := openRegular(w.lockPath()); err == nil {
				pid = readRecord(f).PID
				f.Close()
			}
			return nil, busy(pid)
		}
		return nil, fmt.Errorf("locking %s: %w", w.StateDir, err)
	}
	f, err := openLockFile(w.lockPath())
	if err != nil {
		dir.Close()
		if errors.Is(err, os.ErrNotExist) {
			return func() {}, nil // the state directory went meanwhile
		}
		return nil, lockFileError(w, err)
	}
	// No run holds it: another command's claim does, or a status looks
	// for an instant.
	if err := flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		dir.Close()
		return nil, fmt.Errorf("locking %s: %w", w.lockPath(), err)
	}
	release = func() { f.Close(); dir.Close() }
	switch err := w.load(); {
	case err == nil:
		w.unreadable = nil // mended meanwhile
	case errors.Is(err, os.ErrNotExist), w.unreadable != nil: // clean removes it
	default:
		release()
		return nil, err
	}
	return release, nil
}

// claimWait is how long a run waits for another command's claim of its
// workspace (a config set takes a moment) before it says that one holds it.
const claimWait = 2 * time.Second

// claimHolds reports whether what holds w's state directory is claims,
// not a run: a run holds its lock alone, claims share it.
func claimHolds(w *workspace) bool {
	_, held, err := lockStateDir(w, syscall.LOCK_SH)
	return err == nil && !held
}

// hintOr is the hint for a workspace held: runHint for a run, else to wait
// for the command that holds it.
func (e *errLocked) hintOr(runHint string) string {
	if e.claim {
		return "run it again once that command is done"
	}
	return runHint
}
