package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestTerminalReadFromBackgroundFails: a read of the terminal from a
// background process group, through withoutTTIN,
// fails with EIO instead of stopping the process with SIGTTIN. The
// keyboard's reader and typedStopKey read that way; a read that raced a
// move to the background stopped a run (stress seed 35 in CI).
func TestTerminalReadFromBackgroundFails(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("withoutTTIN blocks SIGTTIN on Linux only")
	}
	// The leader owns the terminal (a session of its own, in the
	// foreground); it starts the reader in a process group of its own,
	// in the background, and not orphaned (its parent is in the session).
	out := onTerminal(t, []string{"ttin-probe", "leader"}, "", "")
	if !strings.Contains(out, "read: EIO") {
		t.Fatalf("probe output:\n%s", out)
	}
}

// onTerminal runs the test binary as args (a command of testscript.Main)
// in a session of its own, on a new pseudo-terminal it controls, types
// keys once it has written ready (if any), and returns what it wrote. The
// test fails if the command fails or takes over 30 s.
func onTerminal(t *testing.T, args []string, ready, keys string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(exe, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var mu sync.Mutex
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 256)
		typed := ready == ""
		for {
			n, err := ptmx.Read(buf) // ends with EIO once the command is gone
			mu.Lock()
			out.Write(buf[:n])
			if !typed && strings.Contains(out.String(), ready) {
				ptmx.Write([]byte(keys))
				typed = true
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		err = errors.New("it did not end within 30 s")
	}
	ptmx.Close()
	<-copied
	if err != nil {
		t.Fatalf("%s: %v; output:\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
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

// TestSignalKeyModesComeFirst: when an agent has turned the terminal's
// ISIG off and the keyboard reads Ctrl+Z as a plain byte, the run's modes
// (ISIG on) are back, and what was typed after the key discarded, before
// the signal goes to the process group. Under a wrapper that leads the job
// the shell takes the terminal back as soon as the signal stops the
// wrapper; a restore after that, on a foreground check made before, threw
// away what the user typed at the shell's prompt (CI, stop 37:
// pty-agent-isig-suspend).
func TestSignalKeyModesComeFirst(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the probe counts the terminal's input queue with FIONREAD (Linux)")
	}
	// Ctrl+Z, then keys typed after it in the same read.
	out := onTerminal(t, []string{"sigkey-probe"}, "ready", "\x1asss")
	if !strings.Contains(out, "at the signal: isig on, 0 bytes waiting, 0 keys") {
		t.Fatalf("probe output:\n%s", out)
	}
}

// sigkeyProbeMain is the command sigkey-probe: in the foreground of its
// terminal, it reads keys (openKeyboard), turns ISIG off as an agent would,
// and says what the terminal is like when the SIGTSTP of a typed Ctrl+Z
// comes.
func sigkeyProbeMain() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTSTP)
	kb := openKeyboard(os.Stdin)
	if kb == nil || !kb.active() {
		fmt.Println("no keyboard")
		os.Exit(1)
	}
	t, err := getTermios(os.Stdin)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	t.Lflag &^= syscall.ISIG
	if err := setTermios(os.Stdin, t); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {
	case <-sigs:
	case <-time.After(20 * time.Second):
		fmt.Println("no SIGTSTP")
		os.Exit(1)
	}
	now, err := getTermios(os.Stdin)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	isig := "off"
	if now.Lflag&syscall.ISIG != 0 {
		isig = "on"
	}
	waiting, err := inputWaiting(os.Stdin)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	// The keys after Ctrl+Z are never delivered: wait for the reader's
	// next read to end (a deadline) before counting them.
	kb.pause()
	fmt.Printf("at the signal: isig %s, %d bytes waiting, %d keys\n", isig, waiting, len(kb.keys))
	kb.close()
}
