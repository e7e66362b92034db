//go:build linux

package main

import "syscall"

// rssMiB is a child's peak resident memory in MiB: Linux counts it in KiB.
func rssMiB(ru *syscall.Rusage) int64 { return ru.Maxrss >> 10 }
