package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRunIterations runs b.N iterations of a run in this process, as
// the binary runs them (GOMAXPROCS=1), against scripts/bench.sh's no-op
// agent: a time per iteration that includes the agent's own start and
// exit, and the tool's own CPU time per iteration (self-cpu-ns/op), which
// is what the tool adds. With -cpuprofile it is the profile of the
// per-iteration work:
//
//	go test -run XXX -bench RunIterations -benchtime 2000x -cpuprofile cpu.out
//	go tool pprof -top claude-iterate.test cpu.out
//
// The run becomes the process's subreaper and handles its signals, as a
// run does: run it on its own (-run XXX), not beside the tests.
func BenchmarkRunIterations(b *testing.B) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		b.Skip("no /bin/sh")
	}
	dir := b.TempDir()
	agent := filepath.Join(dir, "noop-claude")
	script := "#!/bin/sh\ncat > /dev/null\necho '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\",\"total_cost_usd\":0}'\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "task.md"), []byte("benchmark task\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		b.Fatal(err)
	}
	defer os.Chdir(wd)
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config")) // no user config
	b.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))   // nor the user's registry of runs
	if st := run([]string{"init", "bench", "--instructions", "task.md"}, nil, io.Discard, io.Discard); st.code != exitOK {
		b.Fatalf("init: exit %d", st.code)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	st := run([]string{"run", "bench", "-m", strconv.Itoa(b.N), "--no-delay", "--stagnation-threshold", "0", "-q", "--claude", agent, "--no-keyboard"}, nil, io.Discard, io.Discard)
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	if st.code != exitOK {
		b.Fatalf("run: exit %d", st.code)
	}
	self := time.Duration(after.Utime.Nano() - before.Utime.Nano() + after.Stime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(self.Nanoseconds())/float64(b.N), "self-cpu-ns/op")
}
