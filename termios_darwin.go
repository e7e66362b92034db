//go:build darwin

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// The terminal-mode ioctl requests on macOS.
const (
	ioctlGetTermios = syscall.TIOCGETA
	ioctlSetTermios = syscall.TIOCSETA
)

// flushInput discards what was typed on terminal f and not read yet.
func flushInput(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		const fread = 1
		which := int32(fread)
		syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCFLUSH, uintptr(unsafe.Pointer(&which)))
	})
}

// withoutTTIN runs fn: the keyboard's reads are timed by the terminal on
// macOS (VMIN 0, VTIME 1), and the tool checks the foreground before it
// reads; the SIGTTIN block is Linux's (see termios_linux.go).
func withoutTTIN(fn func()) { fn() }

// withoutTTOU runs fn: the SIGTTOU block is Linux's (see termios_linux.go);
// here every change of the terminal's modes rests on the foreground check
// before it, and a move to the background between the two stops the tool
// until fg, as it did before.
func withoutTTOU(fn func()) { fn() }
