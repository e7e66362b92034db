//go:build darwin

package main

import "syscall"

// The terminal-mode ioctl requests on macOS.
const (
	ioctlGetTermios = syscall.TIOCGETA
	ioctlSetTermios = syscall.TIOCSETA
)
