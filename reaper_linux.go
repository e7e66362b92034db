//go:build linux

package main

import (
	"syscall"
	"unsafe"
)

// canPeekChildren: waitid with WNOWAIT shows a dead child without reaping it.
const canPeekChildren = true

// peekDeadChild returns the pid of a dead child of this process without
// reaping it (waitid with WNOWAIT), or 0 when there is none.
func peekDeadChild() int {
	const (
		pAll    = 0
		wNoWait = 0x01000000
		wAll    = 0x40000000 // __WALL: children of any kind
	)
	for {
		var info [128]byte
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pAll, 0, uintptr(unsafe.Pointer(&info[0])),
			syscall.WEXITED|syscall.WNOHANG|wNoWait|wAll, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return 0
		}
		return siginfoPid(&info)
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
