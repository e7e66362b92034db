//go:build linux

package main

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestTerminalWriteWokenAfterFlush: a Ctrl+C typed while a write to the
// terminal waits for room flushes the terminal's output, and Linux wakes
// no writer then (echo off, as the keyboard sets the terminal): the write
// must not sleep for good (stress seed 83 hung so, the console and the
// supervisor behind it). Rounds until a write was woken; every write must
// end (flushDuringWrite fails the test otherwise). A kernel that loses no
// wake-up in any round skips the test: it proved nothing there
// (TestTerminalWriteLooksAgain checks the kick itself, on any kernel).
func TestTerminalWriteWokenAfterFlush(t *testing.T) {
	// A terminal is usually blocking (the write sleeps in the system
	// call); one left non-blocking by another program waits in the
	// runtime's poller.
	wokenAny := false
	for _, flags := range []int{0, syscall.O_NONBLOCK} {
		woken := false
		for round := 0; round < 20 && !woken; round++ {
			if kicks := flushDuringWrite(t, flags); kicks > 0 {
				t.Logf("flags %#x, round %d: the write was woken %d times, and ended", flags, round, kicks)
				woken = true
			}
		}
		wokenAny = wokenAny || woken
	}
	if !wokenAny {
		t.Skip("no write lost its wake-up in 20 rounds: this kernel wakes the writer after a flush")
	}
}

// TestTerminalWriteLooksAgain: a write to a terminal that has no room for
// it (nobody reads the pty) looks again every kickAfter — the thread of a
// blocking write is kicked, a write in the poller gets a deadline — and,
// once there is room, ends having written everything, on a blocking and on
// a non-blocking descriptor.
func TestTerminalWriteLooksAgain(t *testing.T) {
	for _, flags := range []int{0, syscall.O_NONBLOCK} {
		master, slave, err := pty.Open()
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		fd, err := syscall.Open(slave.Name(), syscall.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC|flags, 0)
		if err != nil {
			t.Fatal(err)
		}
		out := os.NewFile(uintptr(fd), slave.Name())
		h := &ttyHold{f: out}
		const size = 200000 // more than a pty holds
		type result struct {
			n   int
			err error
		}
		data := make([]byte, size)
		for i := range data {
			data[i] = 'a' + byte(i%26)
		}
		done := make(chan result, 1)
		go func() {
			n, err := h.Write(data)
			done <- result{n, err}
		}()
		kicks := func() int { return kicksOf(h) }
		deadline := time.After(20 * time.Second)
		tick := time.NewTicker(10 * time.Millisecond)
		for kicks() < 2 { // nobody reads: the write waits for room
			select {
			case r := <-done:
				t.Fatalf("flags %#x: the write ended (%d bytes, %v) though nobody read the terminal", flags, r.n, r.err)
			case <-tick.C:
			case <-deadline:
				t.Fatalf("flags %#x: a write waiting for room was not woken to look again (%d kicks in 20s; want one every %v)", flags, kicks(), kickAfter)
			}
		}
		tick.Stop()
		read := make(chan []byte, 1)
		go func() { // room: the write goes on
			got := make([]byte, 0, size)
			b := make([]byte, 4096)
			for len(got) < size {
				n, err := master.Read(b)
				got = append(got, b[:n]...)
				if err != nil {
					break
				}
			}
			read <- got
		}()
		select {
		case r := <-done:
			if r.err != nil || r.n != size {
				t.Errorf("flags %#x: the write wrote %d bytes, %v; want %d, no error", flags, r.n, r.err, size)
			}
		case <-deadline:
			t.Fatalf("flags %#x: the write did not end once the terminal was read", flags)
		}
		select {
		case got := <-read:
			if !bytes.Equal(got, data) {
				t.Errorf("flags %#x: the terminal got %d bytes, not the %d written, in order", flags, len(got), size)
			}
		case <-deadline:
			t.Fatalf("flags %#x: the terminal did not get what was written", flags)
		}
		out.Close()
		slave.Close()
		master.Close()
	}
}

// flushDuringWrite writes a flood to a pty through ttyHold, on a
// descriptor opened with flags, while its reader reads slowly and Ctrl+C is
// typed; it returns how many times the write was woken, and fails the test
// if the write does not end.
func flushDuringWrite(t *testing.T, flags int) int {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	fd, err := syscall.Open(slave.Name(), syscall.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC|flags, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := os.NewFile(uintptr(fd), slave.Name()) // in the poller if non-blocking
	defer out.Close()
	tio, err := getTermios(slave)
	if err != nil {
		t.Fatal(err)
	}
	tio.Lflag &^= syscall.ICANON | syscall.ECHO // as the keyboard sets it
	if err := setTermios(slave, tio); err != nil {
		t.Fatal(err)
	}
	h := &ttyHold{f: out}
	done := make(chan error, 1)
	go func() {
		line := bytes.Repeat([]byte("x"), 100000)
		for range 8 {
			if _, err := h.Write(line); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	go func() {
		b := make([]byte, 4096)
		for {
			if _, err := master.Read(b); err != nil {
				return
			}
			time.Sleep(time.Millisecond) // slower than the writer
		}
	}()
	kicks := func() int { return kicksOf(h) }
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(3 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return kicks()
		case <-tick.C:
			// Ctrl+C, which flushes the output, until a write was woken;
			// then the write goes on to its end.
			if kicks() == 0 {
				master.Write([]byte{3})
			}
		case <-deadline:
			t.Fatal("a write to the terminal slept for good after Ctrl+C flushed the output")
		}
	}
}

// kicksOf is how many times h's writes were woken so far.
func kicksOf(h *ttyHold) int {
	h.kick.mu.Lock()
	defer h.kick.mu.Unlock()
	return h.kick.kicks
}
