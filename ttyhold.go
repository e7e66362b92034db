package main

// This file keeps the tool's own terminal output from stopping it. With
// "stty tostop", a background process that writes to its terminal is stopped
// by SIGTTOU — the tool would then stand still while the agent runs on and
// its timeouts count. The rules are: when stdout or stderr is a terminal,
// the tool is not in the terminal's foreground process group, and tostop is
// set, what the tool prints is held (up to heldMax; beyond that the oldest is
// dropped, with a note) and written once the tool is back in the foreground;
// SIGTTOU is never caught or ignored (a caught one makes the write loop, an
// ignored one is inherited by the agent). At exit, what is held is written
// anyway: nothing runs on any more, and the user asked for tostop.

import (
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// heldMax bounds what is held while in the background.
const heldMax = 256 << 10

// ttyHold is a terminal writer that holds output while the tool is in the
// background of a tostop terminal.
type ttyHold struct {
	f     *os.File
	mu    sync.Mutex
	held  []byte
	lost  bool
	force bool // at exit: write whatever happens
	kick  writeKicker
}

// holdInBackground wraps w when it is a terminal; other writers are
// returned as they are.
func holdInBackground(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f) {
		return w
	}
	return &ttyHold{f: f}
}

// mustHold reports whether a write now would stop the tool.
func (t *ttyHold) mustHold() bool {
	if t.force {
		return false
	}
	pg, err := foregroundGroup(t.f)
	if err != nil || pg == syscall.Getpgrp() {
		return false
	}
	tio, err := getTermios(t.f)
	return err == nil && tio.Lflag&syscall.TOSTOP != 0
}

func (t *ttyHold) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mustHold() {
		t.held = append(t.held, p...)
		if len(t.held) > heldMax {
			t.held = append(t.held[:0], t.held[len(t.held)-heldMax:]...)
			t.lost = true
		}
		return len(p), nil
	}
	if err := t.flushLocked(); err != nil {
		return 0, err
	}
	return t.write(p)
}

// write writes p to the terminal; t.mu is held. A write still waiting for
// room after kickAfter looks again, and again every kickAfter: on Linux, a
// Ctrl+C flushes the terminal's output without waking a writer that waits
// for room (a pty's line discipline, with echo off as the keyboard sets
// it), and the write slept for good, the console and the supervisor behind
// it, so that the run never ended. A blocking terminal, as one usually is,
// has its sleeping write interrupted (writeKicker); one opened non-blocking
// (in the runtime's poller) gets a deadline, and what is left is written
// again.
func (t *ttyHold) write(p []byte) (int, error) {
	if t.f.SetWriteDeadline(time.Now().Add(kickAfter)) == nil {
		defer t.f.SetWriteDeadline(time.Time{})
		written := 0
		for {
			n, err := t.f.Write(p[written:])
			written += n
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return written, err
			}
			t.kick.count()
			t.f.SetWriteDeadline(time.Now().Add(kickAfter))
		}
	}
	runtime.LockOSThread() // the thread the kick interrupts
	defer runtime.UnlockOSThread()
	if tid := threadID(); tid != 0 { // 0: no thread to interrupt (macOS)
		t.kick.start(tid)
		defer t.kick.stop()
	}
	return t.f.Write(p)
}

func (t *ttyHold) flushLocked() error {
	if len(t.held) == 0 {
		return nil
	}
	if t.lost {
		t.lost = false
		t.write([]byte("[output held while in the background was cut to its last 256 KiB]\n"))
	}
	_, err := t.write(t.held)
	t.held = t.held[:0]
	return err
}

// release writes what is held if the tool is back in the foreground.
func (t *ttyHold) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.held) > 0 && !t.mustHold() {
		t.flushLocked()
	}
}

// holdingNow reports whether output is being held, without waiting: known
// is false while a write holds the writer (a terminal that does not
// drain: Ctrl+S, a flood).
func (t *ttyHold) holdingNow() (holding, known bool) {
	if !t.mu.TryLock() {
		return false, false
	}
	defer t.mu.Unlock()
	return len(t.held) > 0, true
}

// releaseAll writes what is held whatever the foreground (at exit).
func (t *ttyHold) releaseAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.force = true
	t.flushLocked()
}

// kickAfter is how long a write to the terminal may wait for room before
// it is woken to look again; a terminal that is really stopped (Ctrl+S)
// only sees the write look again every kickAfter.
const kickAfter = 200 * time.Millisecond

// writeKicker wakes a write that sleeps too long: once it has run
// kickAfter, and again every kickAfter, its thread gets SIGURG, the
// runtime's own preemption signal (which the runtime takes in its stride
// at any time). The system call is interrupted, restarted (SA_RESTART),
// and finds the room a lost wake-up did not announce.
type writeKicker struct {
	mu    sync.Mutex
	tid   int       // the writing thread; 0: no write under way
	since time.Time // when the write under way started, or was last kicked
	timer *time.Timer
	kicks int // how many times a write was woken (tests)
}

// start notes that thread tid (locked to its goroutine) writes.
func (k *writeKicker) start(tid int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.tid, k.since = tid, time.Now()
	if k.timer == nil {
		k.timer = time.AfterFunc(kickAfter, k.fire)
	} else {
		k.timer.Reset(kickAfter)
	}
}

// stop notes that the write is over.
func (k *writeKicker) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.tid = 0
	k.timer.Stop()
}

// count counts a write woken by its deadline (one in the poller).
func (k *writeKicker) count() {
	k.mu.Lock()
	k.kicks++
	k.mu.Unlock()
}

// fire kicks the write under way if it has slept kickAfter: a firing
// meant for an earlier write, late, finds a later start and does nothing
// (start armed the timer again).
func (k *writeKicker) fire() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.tid == 0 || time.Since(k.since) < kickAfter {
		return
	}
	k.kicks++
	interruptThread(k.tid)
	k.since = time.Now()
	k.timer.Reset(kickAfter)
}
