package main

// This file holds what keeps a command's output right: hints that name
// commands which work as typed (shellQuote), and output whose failed writes
// are reported rather than lost (errWriter).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
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

// confirm asks question on the terminal and reports whether the answer is
// yes. It fails when standard input is not a terminal.
func confirm(env *cliEnv, question string) (bool, error) {
	in, ok := env.stdin.(*os.File)
	if !ok || !isTerminal(in) {
		return false, errors.New("standard input is not a terminal")
	}
	fmt.Fprint(env.stderr, question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(env.stderr)
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// failUsage prints err and hint the house way and ends the command with exit
// status 2: for a command line that cannot work where it was given (no
// terminal, no confirmation), a usage error whose fix is not in the usage.
func failUsage(env *cliEnv, err error, hint string, args ...any) error {
	fmt.Fprintf(env.stderr, "%s: %v\n", progName, err)
	fmt.Fprintf(env.stderr, "%s: hint: %s\n", progName, fmt.Sprintf(hint, args...))
	return &exitCodeError{code: exitUsage}
}
