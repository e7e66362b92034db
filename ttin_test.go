package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestTerminalReadFromBackgroundFails: a read of the terminal from a
// background process group, through withoutTTIN,
// fails with EIO instead of stopping the process with SIGTTIN. The
// keyboard's reader and honourStopKeys read that way; a read that raced a
// move to the background stopped a run (stress seed 35 in CI).
func TestTerminalReadFromBackgroundFails(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("withoutTTIN blocks SIGTTIN on Linux only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	// The leader owns the terminal (a session of its own, in the
	// foreground); it starts the reader in a process group of its own,
	// in the background, and not orphaned (its parent is in the session).
	cmd := exec.Command(exe, "leader")
	cmd.Args[0] = "ttin-probe"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, ptmx) // ends with EIO once the leader is gone
		close(copied)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the probe did not end within 30 s")
	}
	ptmx.Close()
	<-copied
	if err != nil || !strings.Contains(out.String(), "read: EIO") {
		t.Fatalf("probe: %v; output:\n%s", err, out.String())
	}
}

// ttinProbeMain is the command ttin-probe: "leader" starts "reader" in
// the background of its terminal and reports whether the reader was
// stopped; "reader" reads the terminal through withoutTTIN.
func ttinProbeMain() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ttin-probe leader|reader")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "reader":
		var err error
		withoutTTIN(func() { _, err = os.Stdin.Read(make([]byte, 16)) })
		if errors.Is(err, syscall.EIO) {
			fmt.Println("read: EIO")
			return
		}
		fmt.Printf("read: %v\n", err)
		os.Exit(3)
	case "leader":
		exe, err := os.Executable()
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		cmd := exec.Command(exe, "reader")
		cmd.Args[0] = "ttin-probe"
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WUNTRACED, nil); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		if ws.Stopped() {
			fmt.Printf("reader stopped by %v\n", ws.StopSignal())
			syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			syscall.Wait4(cmd.Process.Pid, &ws, 0, nil)
			os.Exit(1)
		}
		os.Exit(ws.ExitStatus())
	}
	os.Exit(2)
}
