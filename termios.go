package main

// This file holds the terminal ioctls: reading and setting a terminal's mode
// and asking for its foreground process group. The request numbers differ
// per system (termios_linux.go, termios_darwin.go). Every call goes through
// SyscallConn, never (*os.File).Fd, which would put the file in blocking
// mode and stop read deadlines from working.

import (
	"os"
	"syscall"
	"unsafe"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := getTermios(f)
	return err == nil
}

// getTermios reads f's terminal mode.
func getTermios(f *os.File) (*syscall.Termios, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var t syscall.Termios
	var errno syscall.Errno
	err = rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(ioctlGetTermios), uintptr(unsafe.Pointer(&t)))
	})
	if err != nil {
		return nil, err
	}
	if errno != 0 {
		return nil, errno
	}
	return &t, nil
}

// setTermios sets f's terminal mode at once. It never stops the tool
// (withoutTTOU): from the background the change goes through, so the
// caller checks the foreground first.
func setTermios(f *os.File, t *syscall.Termios) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	withoutTTOU(func() {
		err = rc.Control(func(fd uintptr) {
			_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(ioctlSetTermios), uintptr(unsafe.Pointer(t)))
		})
	})
	if err != nil {
		return err
	}
	if errno != 0 {
		return errno
	}
	return nil
}

// foregroundGroup returns the terminal's foreground process group.
func foregroundGroup(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pgrp int32
	var errno syscall.Errno
	err = rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGPGRP), uintptr(unsafe.Pointer(&pgrp)))
	})
	if err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	return int(pgrp), nil
}

// savedMode is a terminal's mode saved when a run starts, to restore at its
// end whether or not the keyboard was read: a program that changed it
// (stty) must not leave the user's shell broken. It is the mode the tool
// first finds in the foreground: in the background, the terminal's modes
// are the shell's line editing (a run started with &, or stopped before it
// started and sent on with bg), which are not the user's.
type savedMode struct {
	f *os.File
	t *syscall.Termios // nil until the tool is first in the foreground
}

// saveTerminalMode saves the mode of the first of files that is a terminal
// (from the foreground only: see savedMode), or returns nil.
func saveTerminalMode(files ...any) *savedMode {
	for _, v := range files {
		f, ok := v.(*os.File)
		if !ok {
			continue
		}
		if isTerminal(f) {
			m := &savedMode{f: f}
			m.capture()
			return m
		}
	}
	return nil
}

// capture saves the terminal's mode if none is saved yet and the tool is
// in the foreground, and reports whether one is saved.
func (m *savedMode) capture() bool {
	if m.t != nil {
		return true
	}
	if pg, err := foregroundGroup(m.f); err != nil || pg != syscall.Getpgrp() {
		return false
	}
	t, err := getTermios(m.f)
	if err != nil {
		return false
	}
	m.t = t
	return true
}

// restore sets the saved mode back if it changed, and only from the
// foreground: from the background, the change itself would stop the tool
// with SIGTTOU.
func (m *savedMode) restore() { m.put(false) }

// put is restore; with honour (the look-around without the keyboard), a
// stop key typed while something had ISIG off is honoured: read before the
// modes come back (typedStopKey), raised after (raiseKey).
func (m *savedMode) put(honour bool) {
	if m == nil || !m.capture() {
		return
	}
	now, err := getTermios(m.f)
	if err != nil || *now == *m.t {
		return
	}
	if pg, err := foregroundGroup(m.f); err != nil || pg != syscall.Getpgrp() {
		return
	}
	var sig syscall.Signal
	typed := false
	if honour && now.Lflag&syscall.ISIG == 0 && m.t.Lflag&syscall.ISIG != 0 {
		sig, typed = typedStopKey(m.f, now, m.t)
	}
	putModes(m.f, now, m.t)
	if typed {
		raiseKey(sig)
	}
}
