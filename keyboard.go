package main

// This file implements the keyboard: the s key that toggles a graceful stop.
// The rules are: keys are read only when stdin is a terminal and the tool is
// in the terminal's foreground process group (a read from the background
// would stop the tool with SIGTTIN), and on Linux the reader's thread blocks
// SIGTTIN (withoutTTIN), so that a read racing a move to the background
// fails with EIO and pauses the reader until the tool is back; the terminal
// is put in cbreak mode — ICANON and ECHO off, ISIG and OPOST kept, so
// Ctrl+C and Ctrl+Z still raise signals and output still gets its carriage
// returns (raw mode would turn them into plain bytes); the previous mode is restored on every exit path
// and before the tool suspends, from the foreground (or while the modes are
// still the keyboard's: see pause), and the previous mode is the one the
// tool first found in the foreground, never the shell's line editing; keys come from /dev/tty opened with
// os.OpenFile, which is pollable on Linux, so a pending read can be
// cancelled with a deadline — its Fd method is never called (that would make
// it blocking), ioctls go through SyscallConn. Where the terminal cannot be
// polled (macOS: kqueue does not take ttys, and SetReadDeadline fails), reads
// are timed by the terminal itself instead (VMIN 0, VTIME 1: a read returns
// after a tenth of a second without a key), so that a pause never leaves a
// read pending that would stop a background tool with SIGTTIN.

import (
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// keyboard reads keys from the controlling terminal.
type keyboard struct {
	tty *os.File
	// saved is the terminal's mode as the tool first found it in the
	// foreground (nil until then): the modes of a terminal the tool does
	// not own are the shell's line editing, not the user's (a run started
	// in the background, or stopped early and sent there with bg).
	saved *syscall.Termios
	keys  chan byte

	// timedReads is set when read deadlines do not work on the tty.
	timedReads bool
	// panicked receives what a panic in the reader recovered.
	panicked chan any

	mu      sync.Mutex
	reading bool            // the reader goroutine is reading
	cbreak  bool            // the terminal is in cbreak mode
	mode    syscall.Termios // the cbreak mode, while cbreak
	paused  bool            // reading is suspended until resume
	wake    chan struct{}
	closed  bool
}

// openKeyboard returns a keyboard, or nil when stdin is not a terminal or
// /dev/tty cannot be opened.
func openKeyboard(stdin any) *keyboard {
	in, ok := stdin.(*os.File)
	if !ok || !isTerminal(in) {
		return nil
	}
	tty, err := openTerminal("/dev/tty")
	if err != nil {
		return nil
	}
	if _, err := getTermios(tty); err != nil {
		tty.Close()
		return nil
	}
	k := &keyboard{tty: tty, keys: make(chan byte, 16), wake: make(chan struct{}, 1), panicked: make(chan any, 1)}
	k.timedReads = tty.SetReadDeadline(time.Time{}) != nil
	go func() {
		defer func() {
			if p := recover(); p != nil {
				k.panicked <- p
			}
		}()
		// A read from the background fails (EIO, on Linux) rather than
		// stopping the tool; the reader then pauses until resume.
		withoutTTIN(k.read)
	}()
	k.resume()
	return k
}

// inForeground reports whether this process's group owns the terminal.
func (k *keyboard) inForeground() bool {
	pg, err := foregroundGroup(k.tty)
	return err == nil && pg == syscall.Getpgrp()
}

// resume enters cbreak mode and starts reading, if the tool is in the
// foreground; it never touches the terminal from the background.
func (k *keyboard) resume() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed || !k.inForeground() {
		return
	}
	if k.saved == nil {
		t, err := getTermios(k.tty)
		if err != nil {
			return
		}
		k.saved = t
	}
	if !k.cbreak {
		t := *k.saved
		t.Lflag &^= syscall.ICANON | syscall.ECHO
		t.Cc[syscall.VMIN] = 1
		t.Cc[syscall.VTIME] = 0
		if k.timedReads {
			t.Cc[syscall.VMIN] = 0
			t.Cc[syscall.VTIME] = 1
		}
		if setTermios(k.tty, &t) == nil {
			k.cbreak, k.mode = true, t
		}
	}
	if k.paused || !k.reading {
		k.paused = false
		k.tty.SetReadDeadline(time.Time{})
		select {
		case k.wake <- struct{}{}:
		default:
		}
	}
}

// panics returns the channel of the reader's panics (nil without a
// keyboard: it blocks forever).
func (k *keyboard) panics() <-chan any {
	if k == nil {
		return nil
	}
	return k.panicked
}

// active reports whether keys are being read.
func (k *keyboard) active() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cbreak && !k.paused
}

// pause stops reading and restores the terminal's mode (before suspending,
// and at exit): from the foreground, or from the background while the
// modes are still the keyboard's cbreak mode (under a wrapper that leads
// the job, the shell takes the terminal back while the tool handles
// Ctrl+Z; bash then puts its own modes back, and a shell that does not
// would be left without echo). Modes that someone else set since are
// theirs: readline's, for one, differ from cbreak (ICRNL and VLNEXT off).
// Nothing typed is discarded here, even with ISIG off: the reader has read
// it, and under a wrapper the foreground seen a moment ago may be the
// shell's by now, with the user typing at its prompt.
func (k *keyboard) pause() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.paused = true
	k.tty.SetReadDeadline(time.Now())
	if k.cbreak {
		if now, err := getTermios(k.tty); err == nil && (*now == k.mode || k.inForeground()) {
			setTermios(k.tty, k.saved)
		}
		k.cbreak = false
	}
}

// close restores the terminal and stops the reader.
func (k *keyboard) close() {
	if k == nil {
		return
	}
	k.pause()
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// read delivers keys until closed, sleeping while paused.
func (k *keyboard) read() {
	buf := make([]byte, 64)
	for {
		k.mu.Lock()
		closed, paused := k.closed, k.paused || !k.cbreak
		k.reading = !paused && !closed
		k.mu.Unlock()
		if closed {
			k.tty.Close()
			return
		}
		if paused {
			<-k.wake
			continue
		}
		n, err := k.tty.Read(buf)
		for _, b := range buf[:n] {
			if sig, ok := keySignal(b, k.saved); ok {
				// The terminal's ISIG was turned off behind the tool's
				// back (an agent that opened it by name): the key that
				// should have been a signal still is one. As the
				// terminal does, what was typed after it is discarded;
				// the modes come back before the signal goes (raiseKey).
				k.keepMode()
				raiseKey(sig)
				break
			}
			select {
			case k.keys <- b:
			default: // nobody is listening fast enough; drop the key
			}
		}
		// A timed read that expires returns no bytes, which os.File reports
		// as io.EOF; otherwise EOF, like any other error, is a hangup, or
		// a read from the background (EIO): reading pauses until resume,
		// which only the foreground does.
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !(k.timedReads && errors.Is(err, io.EOF)) {
			// The terminal is gone (hangup), or the tool is in the
			// background (EIO): stop reading until resume. Out of cbreak
			// as far as resume knows, so that it sets the mode again:
			// the look-around may have put the start's modes back.
			k.mu.Lock()
			k.paused, k.cbreak = true, false
			k.mu.Unlock()
		}
	}
}

// keepMode puts the keyboard's cbreak mode back if something else changed
// the terminal's modes, and reports whether the keyboard is reading (its
// mode is then the run's). Only from the foreground.
func (k *keyboard) keepMode() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.cbreak || k.paused || k.closed {
		return false
	}
	if now, err := getTermios(k.tty); err == nil && *now != k.mode && k.inForeground() {
		putModes(k.tty, now, &k.mode)
	}
	return true
}
