//go:build darwin

package main

// This file holds the macOS part of process control: how a child is
// started, becoming the child subreaper, listing processes, raising a signal
// on the calling thread, and asking whether any child exists.

import (
	"hash/fnv"
	"os"
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
	cmd := exec.Command("ps", "-A", "-o", "pid=,ppid=,pgid=,stat=")
	out, err := outputOwn(cmd)
	if err != nil {
		return nil
	}
	return parsePS(out, cmd.Process.Pid)
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

// processStart returns a number that tells pid's process from a later one
// with the same pid: a hash of its start time as ps prints it.
func processStart(pid int) (uint64, bool) {
	out, err := outputOwn(exec.Command("ps", "-o", "lstart=", "-p", strconv.Itoa(pid)))
	s := strings.TrimSpace(string(out))
	if err != nil || s == "" {
		return 0, false
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64(), true
}

// processesWithEnv cannot read other processes' environments on macOS; the
// recorded children are all a later run finds there.
func processesWithEnv(kv string) []int { return nil }

// ownDescendants: macOS keeps no children links; the callers list every
// process instead.
func ownDescendants() ([]procInfo, bool) { return nil, false }

// awaitExit returns at once: cmd.Wait blocks instead (see proc_linux.go).
func awaitExit(pid int) {}

// childPipe makes a pipe for one of a child's standard streams and returns
// the tool's end and the child's (see proc_linux.go).
func childPipe(childWrites bool) (tool, child *os.File, err error) {
	r, w, err := os.Pipe()
	if childWrites {
		return r, w, err
	}
	return w, r, err
}

// bootTick is 0: start times come from ps (processStart).
func bootTick() uint64 { return 0 }

// startTicksTrusted is false: there is no tick to trust (bootTick).
func startTicksTrusted(pid int, tick uint64) bool { return false }

// threadID is 0: writes are not woken (writeKicker), as the lost wake-up
// they work around is Linux's.
func threadID() int { return 0 }

// interruptThread does nothing (see threadID).
func interruptThread(tid int) {}

// envReadable: macOS has no /proc, and the tool does not read another
// process's environment there; the record is all a later run has.
const envReadable = false

// startsOrdered: processStart's numbers are hashes, not times.
const startsOrdered = false

// envValue cannot read another process's environment on macOS.
func envValue(pid int, name string) (string, bool) { return "", false }
