//go:build darwin

package main

import "syscall"

// flushSignal is the signal signals.flush sends the tool: macOS has no
// real-time signals, and SIGUSR2 (31) is numbered above every signal a run
// catches. While a run goes on, a SIGUSR2 from elsewhere is caught and
// ignored instead of ending the tool.
const flushSignal = syscall.SIGUSR2
