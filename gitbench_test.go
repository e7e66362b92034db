package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGitIteration is the git work of one iteration of a run in a
// worktree, on a repository of 10,000 files: the status scan that ends the
// iteration (and starts the next one) and the commit of the files the
// agent changed. The agent's writes are not timed. Two shapes of
// iteration: "edit", the agent edits three files; "new", it edits two and
// makes one (a new file needs a git add of its own before the commit).
// Besides the wall time it reports git's CPU time (user and system, of
// every git process), which a busy machine disturbs less. The limit is
// 60 ms per iteration (scripts/bench.sh prints it):
//
//	go test -run XXX -bench GitIteration -benchtime 30x
func BenchmarkGitIteration(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	b.Run("edit", func(b *testing.B) { benchGitIteration(b, 0) })
	b.Run("new", func(b *testing.B) { benchGitIteration(b, 1) })
}

// benchGitIteration is BenchmarkGitIteration with made new files (and
// 3-made edited ones) per iteration.
func benchGitIteration(b *testing.B, made int) {
	dir := b.TempDir()
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.go", f)), []byte(fmt.Sprintf("package d%02d // %d\n", d, f)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=b", "-c", "user.email=b@b", "-c", "gc.auto=0"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "start")
	git("gc", "-q")     // packed, as a real repository is: no gc --auto in the background
	git("status", "-s") // the index's stat data, as after a checkout
	g := findGitTree(dir)
	if g == nil {
		b.Fatal("no git tree")
	}
	g.reuse = true
	gitDir := filepath.Join(g.top, ".git")
	g.env = []string{"GIT_DIR=" + gitDir, "GIT_WORK_TREE=" + g.top} // as startGitWork pins a worktree
	s := &runGitSetup{repo: &gitRepo{top: g.top, common: gitDir}, gitDir: gitDir, commit: true, state: &gitState{Worktree: g.top},
		identity: fallbackIdentity, ws: &workspace{Name: "bench", meta: &metadata{}}, con: newConsole(io.Discard, io.Discard, outputQuiet)}
	before := g.start()
	var cpu time.Duration // git's, in the timed part
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for k := range 3 { // the agent's work
			name := "f000.go"
			if k < made {
				name = fmt.Sprintf("new%05d.go", i)
			}
			p := filepath.Join(dir, fmt.Sprintf("d%02d", (i*3+k)%100), name)
			if err := os.WriteFile(p, []byte(fmt.Sprintf("package x // %d\n", i)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		rec := &iterationRecord{Run: "bench", Iteration: i + 1}
		cpu -= childrenCPU()
		b.StartTimer()
		after := g.snapshot()
		s.afterIteration(g, rec, nil, before, after)
		before = g.start()
		b.StopTimer()
		cpu += childrenCPU()
		var sha string
		if json.Unmarshal(rec.Commit, &sha) != nil || sha == "" {
			b.Fatalf("iteration %d: no commit (%s): %s", i+1, rec.Commit, rec.CommitError)
		}
		if len(before.dirty) != 0 {
			b.Fatalf("iteration %d: left uncommitted: %v", i+1, before.dirty)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "git-cpu-ms/op")
}

// childrenCPU is the CPU time (user and system) of the waited-for child
// processes so far.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
