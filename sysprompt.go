package main

// This file passes the system prompt to the agent. The rules are: a prompt
// that fits in one command-line argument goes with --append-system-prompt;
// a longer one (Linux refuses an argument over 128 KiB with E2BIG, which
// would fail every iteration) goes in a file given with
// --append-system-prompt-file when the CLI's --help names that option, and
// otherwise the run is refused before the first iteration, with the limit.
// The file is private (0600, it holds the prompt) and removed when the run
// ends.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// maxArgBytes is the longest single argument Linux passes to a program:
// MAX_ARG_STRLEN, 32 pages of 4 KiB, its terminating NUL included.
const maxArgBytes = 128<<10 - 1

// systemPromptFileName is where a long system prompt is written, in the
// workspace's state directory.
const systemPromptFileName = ".system-prompt.md"

// cliHelpTimeout bounds the agent's --help, run only for a long prompt.
const cliHelpTimeout = 20 * time.Second

// systemPromptArgs returns the agent's arguments that give it r.systemPrompt.
func (r *runPlan) systemPromptArgs() ([]string, error) {
	if len(r.systemPrompt) <= maxArgBytes {
		return []string{"--append-system-prompt", r.systemPrompt}, nil
	}
	if !r.opts.dryRun && !cliTakesPromptFile(r.spec.path) {
		return nil, withHint(fmt.Errorf("the system prompt is %d bytes, over the %d bytes the kernel takes in one argument, and %s cannot read it from a file (its --help names no --append-system-prompt-file)",
			len(r.systemPrompt), maxArgBytes, r.spec.argv0),
			"shorten the system prompt (%s), or update claude", r.systemPromptSource)
	}
	path := filepath.Join(r.ws.StateDir, systemPromptFileName)
	// Replaced whole: a file left by a killed run may have other permissions.
	if err := writeFileAtomic(path, []byte(r.systemPrompt), 0o600); err != nil {
		return nil, fmt.Errorf("writing the system prompt to a file: %w", err)
	}
	r.promptFile = path
	return []string{"--append-system-prompt-file", path}, nil
}

// cliTakesPromptFile reports whether the agent's --help names
// --append-system-prompt-file (or "--append-system-prompt[-file]").
func cliTakesPromptFile(path string) bool {
	out := probeHelp(path, cliHelpTimeout)
	return bytes.Contains(out, []byte("append-system-prompt-file")) || bytes.Contains(out, []byte("append-system-prompt[-file]"))
}

// helpOutputCap bounds what is read of a --help.
const helpOutputCap = 1 << 20

// probeHelp runs "path --help" in its own process group and returns its
// output. The probe is bounded: it is killed after timeout, and when it
// ends its whole group ends with it, so that a child it left holding its
// output open cannot keep the run waiting for the end of that output.
func probeHelp(path string, timeout time.Duration) []byte {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer r.Close()
	cmd := exec.Command(path, "--help")
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = startOwn(cmd)
	w.Close()
	if err != nil {
		return nil
	}
	pgid := cmd.Process.Pid
	read := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(r, helpOutputCap))
		read <- data
	}()
	exited := make(chan struct{})
	go func() {
		waitOwn(cmd)
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(timeout):
		signalGroup(pgid, syscall.SIGKILL)
		<-exited
	}
	signalGroup(pgid, syscall.SIGKILL)
	// What is in the pipe is read at once; a writer that escaped the group
	// must not hold the run.
	r.SetReadDeadline(time.Now().Add(time.Second))
	return <-read
}
