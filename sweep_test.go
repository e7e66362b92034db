package main

import (
	"slices"
	"syscall"
	"testing"
)

func TestParsePSLeavesOutTheLister(t *testing.T) {
	out := []byte("  1     0     1 Ss\n 100     1   100 S\n 200   100   200 R+\n 300   100   100 Z\n")
	got := parsePS(out, 200)
	var pids []int
	for _, p := range got {
		pids = append(pids, p.pid)
	}
	if want := []int{1, 100, 300}; !slices.Equal(pids, want) {
		t.Errorf("parsePS pids = %v; want %v", pids, want)
	}
	if got[2].state != 'Z' || got[1].pgid != 100 {
		t.Errorf("parsePS fields = %+v", got)
	}
}

// fakeTree is a process table the sweep sees, where a SIGTERM or SIGKILL
// ends a process unless it ignores SIGTERM.
type fakeTree struct {
	procs      map[int]*procInfo
	ignoreTerm map[int]bool
	sent       []string
}

func (f *fakeTree) list() []procInfo {
	var out []procInfo
	for _, p := range f.procs {
		out = append(out, *p)
	}
	return out
}

func (f *fakeTree) kill(pid int, sig syscall.Signal) error {
	if pid < 0 && sig == 0 { // is there anyone in group -pid?
		for _, p := range f.procs {
			if p.pgid == -pid {
				return nil
			}
		}
		return syscall.ESRCH
	}
	p, ok := f.procs[pid]
	if !ok {
		return syscall.ESRCH
	}
	if sig == 0 || sig == syscall.SIGCONT {
		return nil
	}
	f.sent = append(f.sent, signalName(sig)+" "+itoa(pid))
	if sig == syscall.SIGKILL || !f.ignoreTerm[pid] {
		delete(f.procs, p.pid)
	}
	return nil
}

func itoa(n int) string {
	return string(rune('0'+n/100)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10))
}

func TestSweepEndsDescendantsGroupAndRecorded(t *testing.T) {
	// 10 is the tool; 20 a leftover child (re-parented), 21 its child; 30
	// a member of the agent's group 25 re-parented elsewhere (no
	// subreaper); 40 a recorded pid; 50 a stranger; 60 ignores SIGTERM.
	f := &fakeTree{procs: map[int]*procInfo{
		20: {pid: 20, ppid: 10, pgid: 20, state: 'S'},
		21: {pid: 21, ppid: 20, pgid: 20, state: 'S'},
		30: {pid: 30, ppid: 1, pgid: 25, state: 'S'},
		40: {pid: 40, ppid: 1, pgid: 40, state: 'S'},
		50: {pid: 50, ppid: 1, pgid: 50, state: 'S'},
		60: {pid: 60, ppid: 10, pgid: 60, state: 'S'},
	}, ignoreTerm: map[int]bool{60: true}}
	sw := sweeper{list: f.list, self: 10, kill: f.kill, hasChildren: func() bool { return true }}
	n := sw.sweep(false, []int{40}, 25)
	if n != 5 {
		t.Errorf("sweep found %d processes; want 5 (sent %v)", n, f.sent)
	}
	if _, ok := f.procs[50]; !ok {
		t.Errorf("sweep ended a process outside the run: %v", f.sent)
	}
	if len(f.procs) != 1 {
		t.Errorf("left running: %v", f.procs)
	}
	// Graceful: SIGTERM first to all; SIGKILL only to the one ignoring it.
	if !slices.Contains(f.sent, "SIGKILL 060") || slices.Contains(f.sent, "SIGKILL 020") {
		t.Errorf("signals sent = %v; want SIGTERM first, SIGKILL only for 60", f.sent)
	}
}

func TestSweepForceKillsAtOnce(t *testing.T) {
	f := &fakeTree{procs: map[int]*procInfo{20: {pid: 20, ppid: 10, pgid: 20, state: 'S'}}}
	sweeper{list: f.list, self: 10, kill: f.kill, hasChildren: func() bool { return true }}.sweep(true, nil, 0)
	if want := []string{"SIGKILL 020"}; !slices.Equal(f.sent, want) {
		t.Errorf("forced sweep sent %v; want %v", f.sent, want)
	}
}
