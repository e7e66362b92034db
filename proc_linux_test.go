//go:build linux

package main

import (
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
)

// TestStartTick: the start time a child's starter read off the clock is
// the one /proc shows, so that the run's record of it (.lock) names the
// process and no later one with its pid.
func TestStartTick(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	known := 0
	for i := 0; i < 20 && known < 3; i++ {
		c, err := startChild(childSpec{path: sleep, argv0: "sleep", args: []string{"60"}}, func(c *child) {
			defer close(c.streamDone)
			defer c.stdoutR.Close()
			io.Copy(io.Discard, c.stdoutR)
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		start, ok := processStart(c.pid)
		if c.startTick != 0 {
			known++
			if !ok || start != c.startTick {
				t.Errorf("child %d: tick %d, /proc says %d (%v)", c.pid, c.startTick, start, ok)
			}
			if !startTicksTrusted(c.pid, c.startTick) {
				t.Errorf("ticks not trusted on this system")
			}
		}
		syscall.Kill(-c.pgid, syscall.SIGKILL)
		<-c.done
	}
	if known == 0 {
		t.Fatal("no child's start tick was known")
	}
	if sameTick(7, 7) != 7 || sameTick(7, 8) != 0 {
		t.Error("a start that straddles two ticks has a known tick")
	}
	// Where the clock's ticks are not /proc's (checked on the first
	// child), no tick stands for a start time.
	c := child{pid: os.Getpid()}
	start, ok := processStart(c.pid)
	if !ok {
		t.Fatal("no start time for the test itself")
	}
	startTicks.once, startTicks.ok = sync.Once{}, false
	defer func() { startTicks.once, startTicks.ok = sync.Once{}, false }()
	if startTicksTrusted(c.pid, start+1) || startTicksTrusted(c.pid, start) {
		t.Error("ticks trusted after a mismatch with /proc")
	}
}
