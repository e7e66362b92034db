package main

// This file implements the run's console output. The rules are: quiet prints
// errors only; progress (the default) prints a line at each iteration's start
// and end and the run's last line; verbose adds the agent's transcript. Plain
// lines (no cursor movement, no colour) when stdout is not a terminal, TERM is
// dumb or NO_COLOR is set. Diagnostics go to stderr as "claude-iterate: …";
// the run's last line, saying why it ended, too.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
)

// console is the run's output; safe for concurrent use. Everything for
// stdout goes through one buffer, so that the agent's transcript costs no
// system call per line; the transcript is flushed whenever the agent's
// output pauses (see readStream), every other message at once.
type console struct {
	mu    sync.Mutex
	out   *bufio.Writer
	dest  io.Writer // what out writes to
	err   io.Writer
	level string
	// fancy allows in-place updates (a terminal that is not dumb, and no
	// NO_COLOR).
	fancy bool
	// statusShown is true while an in-place status line is on screen.
	statusShown bool
}

func newConsole(out, errw io.Writer, level string) *console {
	dest := holdInBackground(out)
	c := &console{out: bufio.NewWriterSize(dest, 64<<10), dest: dest, err: holdInBackground(errw), level: level}
	if f, ok := out.(*os.File); ok && isTerminal(f) && os.Getenv("TERM") != "dumb" && os.Getenv("NO_COLOR") == "" {
		c.fancy = true
	}
	return c
}

// releaseHeld writes what was held while the tool was in the background of
// a tostop terminal (ttyhold.go), once it is in the foreground again; with
// all set (at exit), whatever the foreground.
func (c *console) releaseHeld(all bool) {
	c.mu.Lock()
	c.out.Flush()
	c.mu.Unlock()
	for _, w := range []io.Writer{c.dest, c.err} {
		if h, ok := w.(*ttyHold); ok {
			if all {
				h.releaseAll()
			} else {
				h.release()
			}
		}
	}
}

// holding reports whether output is being held in the background.
func (c *console) holding() bool {
	for _, w := range []io.Writer{c.dest, c.err} {
		if h, ok := w.(*ttyHold); ok && h.holding() {
			return true
		}
	}
	return false
}

// clearStatus removes an in-place status line; c.mu must be held.
func (c *console) clearStatus() {
	if c.statusShown {
		io.WriteString(c.out, "\r\x1b[K")
		c.statusShown = false
	}
}

// progressf prints a line at the progress and verbose levels.
func (c *console) progressf(format string, args ...any) {
	if c.level == outputQuiet {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearStatus()
	fmt.Fprintf(c.out, format+"\n", args...)
	c.out.Flush()
}

// status shows a transient line: in place on a terminal, else as a line when
// plainToo is set.
func (c *console) status(plainToo bool, format string, args ...any) {
	if c.level == outputQuiet {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fancy {
		io.WriteString(c.out, "\r\x1b[K")
		fmt.Fprintf(c.out, format, args...)
		c.statusShown = true
	} else if plainToo {
		fmt.Fprintf(c.out, format+"\n", args...)
	}
	c.out.Flush()
}

// noticef prints a diagnostic at every level but quiet.
func (c *console) noticef(format string, args ...any) {
	if c.level == outputQuiet {
		return
	}
	c.errorf(format, args...)
}

// errorf prints a diagnostic at every level.
func (c *console) errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearStatus()
	c.out.Flush() // stdout first, so that the two streams stay in order
	fmt.Fprintf(c.err, progName+": "+format+"\n", args...)
}

// rawf prints to stderr without the program name: the interrupt messages
// ("Interrupted: waiting for claude …"), which read as the tool speaking to
// the user at the terminal rather than as diagnostics.
func (c *console) rawf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clearStatus()
	c.out.Flush()
	fmt.Fprintf(c.err, format+"\n", args...)
}

// transcript returns the writer for the agent's formatted output: the log,
// and the screen in verbose mode.
func (c *console) transcript(log *runLog) io.Writer {
	if c.level != outputVerbose {
		return log
	}
	return &teeWriter{c: c, log: log}
}

type teeWriter struct {
	c   *console
	log *runLog
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.log.Write(p)
	t.c.mu.Lock()
	t.c.clearStatus()
	t.c.out.Write(p)
	t.c.mu.Unlock()
	return len(p), nil
}

// Flush shows what the transcript holds so far.
func (t *teeWriter) Flush() {
	t.c.mu.Lock()
	t.c.out.Flush()
	t.c.mu.Unlock()
}
