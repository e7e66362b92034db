//go:build linux

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// inputWaiting counts the bytes typed on terminal f and not read yet
// (FIONREAD).
func inputWaiting(f *os.File) (int, error) {
	var n int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
