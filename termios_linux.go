//go:build linux

package main

import (
	"os"
	"syscall"
)

// The terminal-mode ioctl requests on Linux.
const (
	ioctlGetTermios = syscall.TCGETS
	ioctlSetTermios = syscall.TCSETS
)

// flushInput discards what was typed on terminal f and not read yet.
func flushInput(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		const (
			tcflsh   = 0x540B // TCFLSH, <asm-generic/ioctls.h> (x86, arm, arm64, riscv); elsewhere ENOTTY, harmless
			tciflush = 0
		)
		syscall.Syscall(syscall.SYS_IOCTL, fd, tcflsh, tciflush)
	})
}
