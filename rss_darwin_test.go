//go:build darwin

package main

import "syscall"

// rssMiB is a child's peak resident memory in MiB: macOS counts it in bytes.
func rssMiB(ru *syscall.Rusage) int64 { return ru.Maxrss >> 20 }
