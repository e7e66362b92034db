package main

// TestSignalAtEnd sends SIGINT to the tool as its last iteration ends (the
// agent signals its parent, then exits at once), many times at once, so
// that the machine is loaded: every run must end 130, never 0. The signal
// is delivered to the process before the agent's exit is seen, but the Go
// runtime forwards it to the run's channel asynchronously; a run that only
// polls that channel once may choose its exit status before the signal
// reaches it (issue 33: signal-boundary.txtar failed so once under load).
// CLAUDE_ITERATE_STRESS (as .ci/run sets it) runs more of them.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func TestSignalAtEnd(t *testing.T) {
	unignoreSignals()
	scripts, runs := 12, 5
	if s := os.Getenv("CLAUDE_ITERATE_STRESS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			scripts, runs = 16, n/4+1
		}
	}
	var b strings.Builder
	b.WriteString("env FAKE_CLAUDE=int.txt\nexec claude-iterate init task --instructions task.md\n")
	for i := range runs {
		fmt.Fprintf(&b, "# run %d: SIGINT as the last iteration ends\n", i+1)
		b.WriteString("status 130 claude-iterate run task -m 1 --no-delay\nstderr 'stopped: interrupted \\(SIGINT\\)'\n")
	}
	b.WriteString("-- task.md --\ndo it\n-- int.txt --\nresult ok\nsignal-parent INT\n")
	dir := t.TempDir()
	for i := range scripts {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("end-%d.txtar", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Load: the runtime's signal goroutine must wait for a CPU.
	var done atomic.Bool
	defer done.Store(true)
	for range 4 {
		go func() {
			for !done.Load() {
			}
		}()
	}
	runGeneratedScripts(t, dir, nil)
}
