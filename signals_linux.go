//go:build linux

package main

import "syscall"

// flushSignal is the signal signals.flush sends the tool: a real-time
// signal nobody else sends, numbered above every signal a run catches.
// (SIGRTMIN is 32; the C library keeps 32 and 33 for itself.)
const flushSignal = syscall.Signal(62)
