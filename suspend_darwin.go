//go:build darwin

package main

// stopsOnTSTP cannot read another process's signal dispositions on macOS:
// known is false, and the caller goes by whether the process is stopped.
func stopsOnTSTP(pid int) (stops, known bool) { return false, false }
