package main

// This file keeps the terminal's modes the run's own. The agent runs in a
// session of its own, without a controlling terminal, but it can open the
// terminal by name (/proc/<tool>/fd/0 names it) and change its modes: stty
// -isig would make Ctrl+C a plain key for the rest of the run. The rules
// are: at every look-around the tool compares the terminal's modes with the
// run's (the keyboard's cbreak mode while it reads keys, else the modes at
// the start) and puts the run's back, from the foreground only (from the
// background the change would stop the tool with SIGTTOU); a Ctrl+C, Ctrl+\
// or Ctrl+Z the keyboard reads as a plain key, before that, is still the
// signal; and at exit the modes at the start come back, with a visible
// cursor (an agent writing escapes to the terminal may have hidden it),
// which Ctrl+Z shows too.

import (
	"os"
	"syscall"
)

// keepTerminalMode puts back the run's terminal modes if something changed
// them. Without the keyboard reading, a Ctrl+C or Ctrl+\ typed while an
// agent had ISIG off waits as a plain byte: it is read before putting the
// modes back discards what was typed, and honoured as its signal after.
func keepTerminalMode(kb *keyboard, saved *savedMode) {
	if kb != nil && kb.keepMode() {
		return
	}
	saved.put(true)
}

// typedStopKey reads what was typed on terminal f and not read yet (no
// one else reads it: the keyboard is off), and returns the signal of the
// first byte that is t's VINTR, VQUIT or VSUSP character (keySignal). The
// terminal, whose modes are now, is first put in non-canonical mode with
// nothing to wait for (VMIN 0, VTIME 0): a line not ended is then
// readable, and the read returns at once. The caller puts the run's modes
// back, and only then raises the signal (see raiseKey).
func typedStopKey(f *os.File, now, t *syscall.Termios) (syscall.Signal, bool) {
	peek := *now
	peek.Lflag &^= syscall.ICANON
	peek.Cc[syscall.VMIN], peek.Cc[syscall.VTIME] = 0, 0
	if setTermios(f, &peek) != nil {
		return 0, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	buf := make([]byte, 4096)
	n := 0
	withoutTTIN(func() {
		rc.Read(func(fd uintptr) bool {
			n, _ = syscall.Read(int(fd), buf)
			return true // never wait: VMIN 0, VTIME 0
		})
	})
	for _, b := range buf[:max(n, 0)] {
		if sig, ok := keySignal(b, t); ok {
			return sig, true
		}
	}
	return 0, false
}

// raiseKey sends sig, read as a key while the terminal's ISIG was off, to
// the tool's process group, as the terminal sends a signal key to its
// foreground group (the tool reads keys from the foreground only): under a
// wrapper that leads the job (bash -c, a script, make), the wrapper gets
// it too, so that a Ctrl+Z stops it and the shell sees the job stopped.
// The caller first puts the run's modes back (ISIG on, and what was typed
// after the key discarded, as the terminal does for a signal key): once
// the wrapper stops, the shell takes the terminal back, and a change made
// after that, on a foreground check made before, is made to the shell's
// terminal — a discard then threw away what the user typed at its prompt.
func raiseKey(sig syscall.Signal) {
	syscall.Kill(-syscall.Getpgrp(), sig)
}

// keySignal is the signal key b stands for in the terminal modes t (its
// VINTR, VQUIT and VSUSP characters), as the terminal would send it with
// ISIG on.
func keySignal(b byte, t *syscall.Termios) (syscall.Signal, bool) {
	if b == 0 { // _POSIX_VDISABLE
		return 0, false
	}
	switch b {
	case t.Cc[syscall.VINTR]:
		return syscall.SIGINT, true
	case t.Cc[syscall.VQUIT]:
		return syscall.SIGQUIT, true
	case t.Cc[syscall.VSUSP]:
		return syscall.SIGTSTP, true
	}
	return 0, false
}

// restoreAtExit puts back the terminal modes of the start (from the
// foreground only) and makes the cursor visible.
func (m *savedMode) restoreAtExit() {
	if m == nil {
		return
	}
	m.restore()
	m.showCursor()
}

// showCursor makes the cursor visible, at exit and when the run is
// suspended: an agent writing escapes to the terminal may have hidden it.
// It does so from the background too (a run ended there after bg), where
// the shell owns the terminal and wants its cursor, and with tostop set
// without being stopped by the write (withoutTTOU); not on a plain
// terminal (TERM=dumb or NO_COLOR), which gets no escape from the tool.
func (m *savedMode) showCursor() {
	if m == nil || os.Getenv("TERM") == "dumb" || os.Getenv("NO_COLOR") != "" {
		return
	}
	withoutTTOU(func() { m.f.WriteString("\x1b[?25h") })
}

// putModes sets want on terminal f, whose modes are now. When now has ISIG
// off and want has it on, what was typed meanwhile is discarded: a Ctrl+C
// typed then is a plain byte, which the shell would read as input once the
// tool exits.
func putModes(f *os.File, now, want *syscall.Termios) {
	setTermios(f, want)
	if now.Lflag&syscall.ISIG == 0 && want.Lflag&syscall.ISIG != 0 {
		flushInput(f)
	}
}
