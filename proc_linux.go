//go:build linux

package main

// This file holds the Linux part of process control: how a child is
// started, becoming the child subreaper, listing processes, raising a signal
// on the calling thread, and asking whether any child exists.

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// childSysProcAttr puts a child in its own session (so its own process
// group, with no controlling terminal) and kills it if
// the thread that started it exits (see startChild for why that thread lives
// until the child is reaped).
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// becomeSubreaper makes orphaned descendants re-parent to this process
// instead of init, so that the sweep can find them.
func becomeSubreaper() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// listProcs reads every process's parent, group and state from /proc.
func listProcs() []procInfo {
	var procs []procInfo
	eachProcess("stat", func(pid int, data []byte) {
		f := statFields(data)
		if len(f) < 3 {
			return
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgid, _ := strconv.Atoi(string(f[2]))
		procs = append(procs, procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0]})
	})
	return procs
}

// eachProcess calls fn with the pid and the content of /proc/PID/<file> of
// every process of the machine, leaving out those gone meanwhile.
func eachProcess(file string, fn func(pid int, data []byte)) {
	d, err := openDir("/proc")
	if err != nil {
		return
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		data, err := readKernelFile("/proc/"+n+"/"+file, kernelFileCap)
		if err != nil {
			continue // gone meanwhile
		}
		fn(pid, data)
	}
}

// statFields returns the fields of a /proc/PID/stat after the command
// name, the state first: the name (pid (comm) state ppid pgrp ...) may
// hold spaces and parentheses. nil: data is not a stat line.
func statFields(data []byte) [][]byte {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return nil
	}
	return bytes.Fields(data[i+2:])
}

// raiseHere sends sig to the calling thread, so that its action (stop, or
// the end of the process) takes effect before the call returns.
// kill(getpid(), sig) is not enough: in a multi-threaded process the kernel
// may hand the signal to another thread, and the caller runs on. For
// SIGSTOP that ran the resume code, continuing the agent it had just
// stopped (seen under load: a stopped tool with a thread in
// kill(-pgid, SIGCONT)).
func raiseHere(sig syscall.Signal) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), sig)
}

// hasChildren reports whether this process has any child process, live or
// zombie. Every live descendant is below a child (the tool is a subreaper),
// so without children there is nothing to sweep and the scan of /proc can be
// skipped. It asks waitid with WNOWAIT, which reaps nothing: ECHILD means no
// children; any other answer (including an error) means there may be some.
func hasChildren() bool {
	_, errno := peekWait(pAll, 0, syscall.WEXITED|syscall.WSTOPPED|syscall.WCONTINUED|wAll)
	return errno != syscall.ECHILD
}

// childPipe makes a pipe for one of a child's standard streams and returns
// the tool's end and the child's: childWrites for its stdout and stderr,
// not for its stdin. The tool's end is non-blocking, in the runtime's
// poller; the child's is a plain blocking descriptor, never in the poller,
// as the tool only hands it to the child and closes it. os.Pipe would put
// both ends in the poller and take the child's out again: nine more system
// calls per child.
func childPipe(childWrites bool) (tool, child *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	t, c := p[1], p[0]
	if childWrites {
		t, c = p[0], p[1]
	}
	// The child's end back to blocking: F_SETFL sets the status flags
	// (O_NONBLOCK, O_APPEND, …), which are all off then, and ignores the
	// access mode.
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(c), syscall.F_SETFL, 0); errno != 0 {
		syscall.Close(t)
		syscall.Close(c)
		return nil, nil, os.NewSyscallError("fcntl", errno)
	}
	return os.NewFile(uintptr(t), "|0"), os.NewFile(uintptr(c), "|1"), nil
}

// awaitExit returns once child pid has exited, without reaping it, so that
// the cmd.Wait after it returns at once. It waits in the runtime's poller (a
// pidfd is readable once its process has exited) instead of in a blocking
// waitid: a thread blocked in a system call makes the runtime hand its P to
// another thread and its monitor poll every 20 µs, which costs more CPU
// per iteration than the tool's own work (scripts/bench.sh). Where pidfds
// are missing (Linux before 5.10), it returns at once and cmd.Wait blocks.
func awaitExit(pid int) {
	const (
		sysPidfdOpen  = 434
		pidfdNonblock = syscall.O_NONBLOCK
	)
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), pidfdNonblock, 0)
	if errno != 0 {
		return
	}
	f := os.NewFile(fd, "pidfd") // non-blocking: in the poller
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool { return exitedPidfd(fd) })
}

// exitedPidfd reports whether the process behind pidfd fd has exited (or
// can no longer be asked), without reaping it.
func exitedPidfd(fd uintptr) bool {
	pid, errno := peekWait(pPidfd, fd, syscall.WEXITED)
	return errno != 0 || pid != 0
}

// setDefaultAction sets sig's action to the system's default (SIG_DFL)
// with rt_sigaction, below the Go runtime, whose own handler stays installed
// for signals such as SIGQUIT even after signal.Reset.
func setDefaultAction(sig syscall.Signal) bool {
	var action [4]uint64 // struct sigaction: handler SIG_DFL (0), no flags, empty mask
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&action[0])), 0, 8, 0, 0)
	return errno == 0
}

// sessionOf returns the session of process pid (0: this process), or -1.
func sessionOf(pid int) int {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	if errno != 0 {
		return -1
	}
	return int(sid)
}

// userHZ is the unit of /proc's start times: clock ticks of 1/100 s (the
// kernel's USER_HZ on every architecture Linux runs Go on).
const userHZ = 100

// bootTick is the time since boot (CLOCK_BOOTTIME, which /proc's start
// times count from) in clock ticks, or 0. A process started between two
// calls that return the same tick has that tick as its start time.
func bootTick() uint64 {
	const clockBoottime = 7
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockBoottime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return uint64(ts.Nano()) / (1e9 / userHZ)
}

// startTicks is whether bootTick's ticks are /proc's start times on this
// system: checked once, on the first child, against its /proc/PID/stat.
var startTicks struct {
	once sync.Once
	ok   bool
}

// startTicksTrusted reports whether tick, read by bootTick around the
// start of child pid, can stand for its start time.
func startTicksTrusted(pid int, tick uint64) bool {
	startTicks.once.Do(func() {
		start, ok := processStart(pid)
		startTicks.ok = ok && start == tick
	})
	return startTicks.ok
}

// processStart returns pid's start time (clock ticks since boot, from
// /proc/PID/stat), which tells a process from a later one with its pid; a
// zombie, which is already dead, has none.
func processStart(pid int) (uint64, bool) {
	data, err := readKernelFile("/proc/"+strconv.Itoa(pid)+"/stat", kernelFileCap)
	if err != nil {
		return 0, false
	}
	f := statFields(data)
	if len(f) < 20 || f[0][0] == 'Z' {
		return 0, false
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	return start, err == nil
}

// processesWithEnv returns the processes whose environment holds the
// variable kv ("NAME=value").
func processesWithEnv(kv string) []int {
	want := append([]byte(kv), 0)
	var pids []int
	eachProcess("environ", func(pid int, data []byte) {
		if bytes.HasPrefix(data, want) || bytes.Contains(data, append([]byte{0}, want...)) {
			pids = append(pids, pid)
		}
	})
	return pids
}

// ownDescendants lists the descendants of this process with their start
// times, by walking the kernel's children links (/proc/PID/task/TID/children)
// down from this process instead of reading every process of the machine:
// the tool is a subreaper, so every live descendant is below one of its
// children. It reports false when the kernel keeps no children links.
func ownDescendants() ([]procInfo, bool) {
	var out []procInfo
	queue := []int{os.Getpid()}
	for len(queue) > 0 && len(out) < 4096 {
		pid := queue[0]
		queue = queue[1:]
		tasks, err := openDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			if pid == os.Getpid() {
				return nil, false
			}
			continue // gone meanwhile
		}
		tids, _ := tasks.Readdirnames(-1)
		tasks.Close()
		for _, tid := range tids {
			data, err := readKernelFile("/proc/"+strconv.Itoa(pid)+"/task/"+tid+"/children", kernelFileCap)
			if err != nil {
				if pid == os.Getpid() && errors.Is(err, os.ErrNotExist) {
					return nil, false // no CONFIG_PROC_CHILDREN
				}
				continue
			}
			for _, f := range bytes.Fields(data) {
				child, err := strconv.Atoi(string(f))
				if err != nil {
					continue
				}
				if p, ok := procStat(child); ok {
					out = append(out, p)
					queue = append(queue, child)
				}
			}
		}
	}
	return out, true
}

// procStat reads one process's parent, group, state and start time.
func procStat(pid int) (procInfo, bool) {
	data, err := readKernelFile("/proc/"+strconv.Itoa(pid)+"/stat", kernelFileCap)
	if err != nil {
		return procInfo{}, false
	}
	f := statFields(data)
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	pgid, _ := strconv.Atoi(string(f[2]))
	start, _ := strconv.ParseUint(string(f[19]), 10, 64)
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0], start: start}, true
}

// threadID is the calling thread's id (gettid).
func threadID() int { return syscall.Gettid() }

// interruptThread sends SIGURG to the tool's thread tid: a system call it
// sleeps in is interrupted, and restarted (writeKicker).
func interruptThread(tid int) { syscall.Tgkill(os.Getpid(), tid, syscall.SIGURG) }

// envReadable: another process's environment can be read (/proc/PID/environ).
const envReadable = true

// startsOrdered: start times are clock ticks since boot, so a process that
// started later has a larger one.
const startsOrdered = true

// envValue returns the value of the variable name in process pid's
// environment, and whether it holds one.
func envValue(pid int, name string) (string, bool) {
	data, err := readKernelFile("/proc/"+strconv.Itoa(pid)+"/environ", kernelFileCap)
	if err != nil {
		return "", false
	}
	prefix := name + "="
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(prefix)); ok {
			return string(v), true
		}
	}
	return "", false
}
