//go:build linux

package main

import (
	"bytes"
	"strconv"
	"syscall"
)

// stopsOnTSTP reports whether process pid takes SIGTSTP with its default
// action, and so stops on Ctrl+Z by itself: it neither blocks, ignores
// nor catches it (/proc/<pid>/status). known is false when that cannot be
// read.
func stopsOnTSTP(pid int) (stops, known bool) {
	data, err := readKernelFile("/proc/"+strconv.Itoa(pid)+"/status", kernelFileCap)
	if err != nil {
		return false, false
	}
	bit := uint64(1) << (syscall.SIGTSTP - 1)
	seen := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch string(name) {
		case "SigBlk", "SigIgn", "SigCgt":
			mask, err := strconv.ParseUint(string(bytes.TrimSpace(value)), 16, 64)
			if err != nil {
				return false, false
			}
			if mask&bit != 0 {
				return false, true
			}
			seen++
		}
	}
	return seen == 3, seen == 3
}
