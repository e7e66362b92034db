//go:build linux

package main

import (
	"syscall"
	"unsafe"
)

// canPeekChildren: waitid with WNOWAIT shows a dead child without reaping it.
const canPeekChildren = true

// peekDeadChild returns the pid of a dead child of this process without
// reaping it, or 0 when there is none.
func peekDeadChild() int {
	pid, errno := peekWait(pAll, 0, syscall.WEXITED|wAll)
	if errno != 0 {
		return 0
	}
	return pid
}

// waitid's arguments that package syscall does not name.
const (
	pAll    = 0          // P_ALL: any child
	pPidfd  = 3          // P_PIDFD: the process behind a pidfd
	wNoWait = 0x01000000 // WNOWAIT: leave the child waitable
	wAll    = 0x40000000 // __WALL: children of any kind
)

// peekWait asks waitid(idtype, id, options|WNOHANG|WNOWAIT), which reaps
// nothing, and returns the pid it shows (0: none waitable yet).
func peekWait(idtype, id uintptr, options int) (int, syscall.Errno) {
	for {
		var info [128]byte // siginfo_t
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, idtype, id, uintptr(unsafe.Pointer(&info[0])),
			uintptr(options|syscall.WNOHANG|wNoWait), 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		return siginfoPid(&info), errno
	}
}

// siginfoPid is si_pid of a siginfo_t that waitid filled: the first int of
// the union after three ints, aligned as a pointer. Linux zeroes it when no
// child is waitable.
func siginfoPid(info *[128]byte) int {
	pidAt := 12
	if unsafe.Sizeof(uintptr(0)) == 8 {
		pidAt = 16
	}
	return int(*(*int32)(unsafe.Pointer(&info[pidAt])))
}
