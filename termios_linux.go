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

// flushInput discards what was typed on terminal f and not read yet. Like
// a mode change, it never stops the tool from the background (withoutTTOU).
func flushInput(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	withoutTTOU(func() {
		rc.Control(func(fd uintptr) {
			const (
				tcflsh   = 0x540B // TCFLSH, <asm-generic/ioctls.h> (x86, arm, arm64, riscv); elsewhere ENOTTY, harmless
				tciflush = 0
			)
			syscall.Syscall(syscall.SYS_IOCTL, fd, tcflsh, tciflush)
		})
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
func withoutTTIN(fn func()) { withBlocked(syscall.SIGTTIN, fn) }

// withoutTTOU runs fn on a thread of its own with SIGTTOU blocked there: a
// change of the terminal's modes (or a write with tostop) from the
// background then goes through instead of stopping the whole tool. Under
// a wrapper (bash -c, a script, make), the wrapper leads the job: on
// Ctrl+Z it stops at once and the shell takes the terminal back while the
// tool is still handling its SIGTSTP, and a mode change stopped the tool
// there before it had stopped the agent (issue 34). Every caller checks
// the foreground first, so that the change is the run's own; the block only
// keeps a check and a change, two steps, from stopping the tool. The rules
// of withoutTTIN hold: the mask comes back after fn, and fn starts no
// process.
func withoutTTOU(fn func()) { withBlocked(syscall.SIGTTOU, fn) }

// withBlocked runs fn with sig blocked on the calling thread, locked to it.
func withBlocked(sig syscall.Signal, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	set := uint64(1) << (sig - 1)
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
