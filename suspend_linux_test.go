//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopsOnTSTP: a process that takes SIGTSTP with the default action
// (a wrapper: bash -c, sh, make) is told from one that catches, ignores
// or blocks it (sudo relays it), which suspend must not wait for.
func TestStopsOnTSTP(t *testing.T) {
	start := func(script string) int {
		cmd := exec.Command("sh", "-c", script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		return cmd.Process.Pid
	}
	tests := []struct {
		name   string
		script string
		ready  func(pid int) bool // the shell's traps are set
		want   bool
	}{
		{"default", "exec sleep 60", execed, true},
		{"ignored", "trap '' TSTP; exec sleep 60", execed, false},
		{"caught", "trap 'echo' TSTP; echo > ready; sleep 60 & wait", func(int) bool {
			_, err := os.Stat("ready")
			return err == nil
		}, false},
	}
	inherited, _ := stopsOnTSTP(os.Getpid())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want && !inherited {
				t.Skip("SIGTSTP is ignored or blocked in the test process, and so in its children")
			}
			t.Chdir(t.TempDir())
			pid := start(tt.script)
			deadline := time.Now().Add(10 * time.Second)
			for !tt.ready(pid) {
				if time.Now().After(deadline) {
					t.Fatalf("process %d did not get ready", pid)
				}
				time.Sleep(5 * time.Millisecond) // polling /proc, as procstate does
			}
			if stops, known := stopsOnTSTP(pid); !known || stops != tt.want {
				t.Errorf("stopsOnTSTP(%s) = %v, %v; want %v, true", tt.name, stops, known, tt.want)
			}
		})
	}
	// This process catches it (signal.Notify), as the tool does.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTSTP)
	defer signal.Reset(syscall.SIGTSTP)
	if stops, known := stopsOnTSTP(os.Getpid()); stops || !known {
		t.Errorf("stopsOnTSTP(self, caught) = %v, %v; want false, true", stops, known)
	}
	if _, known := stopsOnTSTP(1 << 30); known {
		t.Errorf("stopsOnTSTP(no such process) is known")
	}
}

// execed reports whether process pid runs sleep now (its shell exec'ed it).
func execed(pid int) bool {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.TrimSpace(string(comm)) == "sleep"
}
