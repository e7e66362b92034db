//go:build linux

package main

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
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

// withoutTTIN runs fn on a thread of its own with SIGTTIN blocked there: a
// read of the terminal from the background then fails with EIO instead of
// stopping the whole tool. The kernel stops a background reader only when
// SIGTTIN is neither blocked nor ignored, and a blocked signal is the
// thread's own: ignoring it would be inherited by the agent, and catching
// it would make the read restart and signal again, without end. The tool
// checks the foreground before it reads, but a check and a read are two
// steps: a Ctrl+Z, bg and a signal between them (stress seed 35 in CI)
// stopped the run with SIGTTIN instead of ending it. The thread's mask is
// put back as it was after fn; fn must start no process (a fork copies the
// thread's mask).
func withoutTTIN(fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	set := uint64(1) << (syscall.SIGTTIN - 1)
	var old uint64
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigBlock, uintptr(unsafe.Pointer(&set)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); errno == 0 {
		defer syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, sigSetmask, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
	}
	fn()
}

// The how of rt_sigprocmask, from <asm-generic/signal-defs.h>.
const (
	sigBlock   = 0
	sigSetmask = 2
)
