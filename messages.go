package main

// This file holds the small helpers that keep messages right: hints that
// name commands which work as typed, the agent's lookup errors, and output
// whose failed writes are reported rather than lost.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
)

// shellQuote quotes s for a POSIX shell when it needs it, so that a hint
// can be pasted as it is.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// agentLookupError explains why the agent command cmd cannot be used: not
// found, or found but not runnable (not executable, a directory).
func agentLookupError(cmd string, err error) error {
	if errors.Is(err, exec.ErrNotFound) {
		return withHint(errors.New(notFoundMessage), "looked for %q in $PATH", cmd)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return withHint(errors.New(notFoundMessage), "%s does not exist", cmd)
	}
	reason := err
	var ee *exec.Error
	if errors.As(err, &ee) {
		reason = unwrapPathError(ee.Err)
	}
	hint := "set --claude / claude.command to the claude program"
	if errors.Is(err, fs.ErrPermission) {
		hint = fmt.Sprintf("make it executable (chmod +x %s), or %s", shellQuote(cmd), hint)
	}
	return withHint(fmt.Errorf("claude CLI %s cannot be run: %v", cmd, reason), "%s", hint)
}

// errWriter remembers the first error of the writes through it, so that a
// command printing many lines reports a failed write (a full disk, a
// closed pipe) once, at the end.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

// writeError is the error a command returns when its output could not be
// written.
func writeError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("writing the output: %v", unwrapPathError(err))
}
