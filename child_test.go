package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// echoChild starts cat as a supervised child with input on its stdin, and
// returns what it printed and its exit status.
func echoChild(t *testing.T, input []byte) ([]byte, error) {
	t.Helper()
	out, _, err := catChild(t, childSpec{input: input})
	return out, err
}

// catChild starts cat as a supervised child as spec says, and returns what
// it printed, the child, and its exit status.
func catChild(t *testing.T, spec childSpec) ([]byte, *child, error) {
	t.Helper()
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat")
	}
	spec.path, spec.argv0 = cat, "cat"
	var out bytes.Buffer
	c, err := startChild(spec, func(c *child) {
		defer close(c.streamDone)
		defer c.stdoutR.Close()
		io.Copy(&out, c.stdoutR)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		syscall.Kill(-c.pgid, syscall.SIGKILL)
		t.Fatal("the child did not end: its input was not closed")
	}
	<-c.streamDone
	<-c.stderrDone
	return out.Bytes(), c, c.waitErr
}

// TestChildPipesMadeAhead: a child started with pipes made in advance
// takes them over (the run makes the next agent's while one runs), and
// they are closed if it cannot start; pipes made for another stream layout
// are closed and made again.
func TestChildPipesMadeAhead(t *testing.T) {
	p, err := makeChildPipes(false)
	if err != nil {
		t.Fatal(err)
	}
	outR := p.outR
	out, c, err := catChild(t, childSpec{input: []byte("ahead"), pipes: p})
	if err != nil || string(out) != "ahead" {
		t.Fatalf("%q, %v", out, err)
	}
	if c.stdoutR != outR {
		t.Error("the child did not read through the pipes made ahead")
	}
	if *p != (childPipes{}) {
		t.Errorf("the pipes are still held after the start: %+v", *p)
	}
	closed := func(f *os.File) bool { return f.Close() != nil }

	p, _ = makeChildPipes(false)
	ends := []*os.File{p.stdinW, p.stdinR, p.outR, p.outW, p.errR, p.errW}
	if _, err := startChild(childSpec{path: filepath.Join(t.TempDir(), "missing"), argv0: "missing", pipes: p}, func(c *child) {}, nil); err == nil {
		t.Fatal("a missing program started")
	}
	for i, f := range ends {
		if !closed(f) {
			t.Errorf("end %d left open after a failed start", i)
		}
	}

	p, _ = makeChildPipes(false)
	ends = []*os.File{p.stdinW, p.stdinR, p.outR, p.outW, p.errR, p.errW}
	out, c, err = catChild(t, childSpec{input: []byte("merged"), pipes: p, mergeOutput: true})
	if err != nil || string(out) != "merged" {
		t.Fatalf("merged: %q, %v", out, err)
	}
	for i, f := range ends {
		if f == c.stdoutR || !closed(f) {
			t.Errorf("end %d of pipes made for separate streams not closed", i)
		}
	}
}

// TestChildInput: the child gets its whole input, then end of file,
// whether the input is empty, fits in the pipe (written before the child
// starts) or is larger (the rest written as the child reads).
func TestChildInput(t *testing.T) {
	for _, size := range []int{0, 1, 4 << 10, 64 << 10, 1 << 20} {
		in := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		out, err := echoChild(t, in)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("%d bytes in, %d out", size, len(out))
		}
	}
}

// TestFillPipe: fillPipe writes what the pipe takes without blocking and
// returns the rest.
func TestFillPipe(t *testing.T) {
	tool, child, err := childPipe(false)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	defer child.Close()
	data := bytes.Repeat([]byte("x"), 4<<20) // more than any pipe holds
	done := make(chan []byte, 1)
	go func() { done <- fillPipe(tool, data) }()
	var rest []byte
	select {
	case rest = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("fillPipe blocked on a full pipe")
	}
	if len(rest) == 0 || len(rest) == len(data) {
		t.Fatalf("%d of %d bytes left", len(rest), len(data))
	}
	got, _ := io.ReadAll(io.LimitReader(child, int64(len(data)-len(rest))))
	if len(got) != len(data)-len(rest) {
		t.Fatalf("the pipe holds %d bytes, fillPipe says %d", len(got), len(data)-len(rest))
	}
	if rest := fillPipe(tool, []byte("more")); len(rest) != 0 {
		t.Fatalf("after a read, %q left", rest)
	}
}

// TestAwaitExit: awaitExit returns once the child has exited, and leaves
// its status to cmd.Wait.
func TestAwaitExit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pidfds are Linux's")
	}
	cmd := exec.Command("sh", "-c", "read x; exit 7")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	returned := make(chan struct{})
	go func() {
		awaitExit(cmd.Process.Pid)
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("awaitExit returned while the child ran")
	case <-time.After(100 * time.Millisecond):
	}
	in.Write([]byte("go\n"))
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("awaitExit did not return when the child exited")
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("status after awaitExit: %v", err)
	}
}

// TestReadKernelFile: the whole file up to max bytes, whatever its size
// against the first buffer; an error names the path.
func TestReadKernelFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte("0123456789"), 700) // over the first buffer
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int64{1, 1024, 1025, 3000, int64(len(data)), 1 << 20} {
		got, err := readKernelFile(path, max)
		want := data[:min(max, int64(len(data)))]
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("max %d: %d bytes, %v; want %d", max, len(got), err, len(want))
		}
	}
	if _, err := readKernelFile(path+"-missing", 10); err == nil || !strings.Contains(err.Error(), path+"-missing") {
		t.Fatalf("missing file: %v", err)
	}
	if runtime.GOOS == "linux" {
		got, err := readKernelFile("/proc/self/stat", kernelFileCap)
		if err != nil || !bytes.HasPrefix(got, []byte(strconv.Itoa(os.Getpid())+" (")) {
			t.Fatalf("/proc/self/stat: %q, %v", got, err)
		}
	}
}

// TestReadFDStopsAtTheSize: a read that comes short with the size fstat
// gave is the end, and no read is made to find it; a short read below the
// size, or past it (the file grew), reads on. A non-blocking pipe stands in
// for the file: a read made past what it holds fails with EAGAIN.
func TestReadFDStopsAtTheSize(t *testing.T) {
	read := func(content string, size int64) (string, error) {
		var p [2]int
		if err := syscall.Pipe(p[:]); err != nil {
			t.Fatal(err)
		}
		syscall.SetNonblock(p[0], true)
		defer syscall.Close(p[0])
		defer syscall.Close(p[1])
		syscall.Write(p[1], []byte(content))
		got, err := readFD(p[0], "f", make([]byte, 0, max(size, 0)+1), 100, size)
		return string(got), err
	}
	if got, err := read("hello", 5); err != nil || got != "hello" {
		t.Errorf("short read at the size: %q, %v; want hello and no further read", got, err)
	}
	for _, c := range []struct {
		content string
		size    int64
	}{{"hello", -1}, {"hello", 6}, {"hello world", 5}} {
		if got, err := read(c.content, c.size); !errors.Is(err, syscall.EAGAIN) || got != c.content {
			t.Errorf("%q, size %d: %q, %v; want it read on (EAGAIN) after the whole", c.content, c.size, got, err)
		}
	}
}

// TestChildPipe: the tool's end of a child's pipe is non-blocking (in the
// poller), the child's is blocking, both close on exec, and the data goes
// the way asked.
func TestChildPipe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("fcntl flags as Linux has them")
	}
	for _, childWrites := range []bool{false, true} {
		tool, child, err := childPipe(childWrites)
		if err != nil {
			t.Fatal(err)
		}
		flags := func(f *os.File) (fl, fd uintptr) {
			fl, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
			fd, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFD, 0)
			return fl, fd
		}
		// Fd() would put a poller's file back to blocking: read the tool's
		// flags through its raw descriptor.
		var toolFl, toolFd uintptr
		rc, _ := tool.SyscallConn()
		rc.Control(func(fd uintptr) {
			toolFl, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
			toolFd, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFD, 0)
		})
		childFl, childFd := flags(child)
		if toolFl&syscall.O_NONBLOCK == 0 || childFl&syscall.O_NONBLOCK != 0 {
			t.Errorf("childWrites %v: tool's end flags %#x, child's %#x; want only the tool's non-blocking", childWrites, toolFl, childFl)
		}
		if toolFd&syscall.FD_CLOEXEC == 0 || childFd&syscall.FD_CLOEXEC == 0 {
			t.Errorf("childWrites %v: an end does not close on exec", childWrites)
		}
		r, w := child, tool
		if childWrites {
			r, w = tool, child
		}
		if _, err := w.Write([]byte("x")); err != nil {
			t.Fatalf("childWrites %v: write: %v", childWrites, err)
		}
		buf := make([]byte, 1)
		if n, err := r.Read(buf); n != 1 || err != nil {
			t.Fatalf("childWrites %v: read %d, %v", childWrites, n, err)
		}
		tool.Close()
		child.Close()
	}
}
