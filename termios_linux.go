//go:build linux

package main

import "syscall"

// The terminal-mode ioctl requests on Linux.
const (
	ioctlGetTermios = syscall.TCGETS
	ioctlSetTermios = syscall.TCSETS
)
