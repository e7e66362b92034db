//go:build darwin

package main

// This file holds the macOS part of process control: how a child is
// started, becoming the child subreaper, listing processes, raising a signal
// on the calling thread, and asking whether any child exists.

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childSysProcAttr puts a child in its own session (so its own process
// group, with no controlling terminal). macOS has no
// parent-death signal: a SIGKILLed tool leaves the child running.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// becomeSubreaper is unavailable on macOS; the sweep then covers the
// descendants recorded before a kill, and the group kill the rest.
func becomeSubreaper() error { return nil }

// listProcs asks ps, as macOS has no /proc.
func listProcs() []procInfo {
	out, err := exec.Command("ps", "-A", "-o", "pid=,ppid=,pgid=,stat=").Output()
	if err != nil {
		return nil
	}
	var procs []procInfo
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		pid, _ := strconv.Atoi(f[0])
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		procs = append(procs, procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[3][0]})
	}
	return procs
}

// raiseHere sends sig to this process and waits a moment for it to take
// effect: macOS has no tgkill through package syscall, and the
// process-directed signal may be handled by another thread after kill
// returns.
func raiseHere(sig syscall.Signal) {
	syscall.Kill(syscall.Getpid(), sig)
	time.Sleep(50 * time.Millisecond)
}

// hasChildren cannot be answered cheaply on macOS: always scan.
func hasChildren() bool { return true }

// setDefaultAction cannot reach below the Go runtime's handler on macOS
// (package syscall has no sigaction there): the caller falls back to its
// exit code.
func setDefaultAction(sig syscall.Signal) bool { return false }

// sessionOf returns the session of process pid (0: this process), or -1.
func sessionOf(pid int) int {
	sid, err := syscall.Getsid(pid)
	if err != nil {
		return -1
	}
	return sid
}
