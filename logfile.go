package main

// This file implements the per-run log, logs/iterate-YYYYMMDD-HHMMSS.log in
// the workspace. The rules are: mode 0600 (it holds code and prompts); a
// header, the run's metadata, the instructions and the system prompt once,
// then each iteration; writes are buffered (at most 10 KiB) and flushed at
// every iteration end and on every exit path, signals included; a log that
// cannot be written disables logging with one warning and the run goes on.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

const logBufferSize = 10 << 10

const logRule = "================================================================================"

// runLog is the log of one run. It is safe for concurrent use; a nil *runLog
// discards everything.
type runLog struct {
	mu     sync.Mutex
	path   string
	f      *os.File
	w      *bufio.Writer
	failed bool
	warn   func(error)
}

// openRunLog creates the run's log in dir. warn is called once if writing
// fails later.
func openRunLog(dir string, start time.Time, warn func(error)) (*runLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := "iterate-" + start.Local().Format("20060102-150405")
	var f *os.File
	var err error
	name := ""
	for i := 1; i < 100; i++ {
		name = base + ".log"
		if i > 1 {
			name = fmt.Sprintf("%s-%d.log", base, i)
		}
		f, err = os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return &runLog{path: filepath.Join(dir, name), f: f, w: bufio.NewWriterSize(f, logBufferSize), warn: warn}, nil
}

// Write implements io.Writer; it never fails, so that the transcript goes on
// to the screen whatever happens to the log.
func (l *runLog) Write(p []byte) (int, error) {
	if l == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.failed {
		if _, err := l.w.Write(p); err != nil {
			l.fail(err)
		}
	}
	return len(p), nil
}

func (l *runLog) fail(err error) {
	l.failed = true
	if l.warn != nil {
		l.warn(fmt.Errorf("writing log %s: %v; logging disabled for this run", l.path, unwrapPathError(err)))
	}
}

// printf writes a formatted line.
func (l *runLog) printf(format string, args ...any) {
	fmt.Fprintf(l, format+"\n", args...)
}

// section writes a titled block: a rule, the title and the lines, a rule.
func (l *runLog) section(title string, lines ...string) {
	var b strings.Builder
	b.WriteString(logRule + "\n" + title + "\n")
	for _, s := range lines {
		b.WriteString(s + "\n")
	}
	b.WriteString(logRule + "\n\n")
	l.Write([]byte(b.String()))
}

// Flush writes the buffer to the file.
func (l *runLog) Flush() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.failed {
		if err := l.w.Flush(); err != nil {
			l.fail(err)
		}
	}
}

// Close flushes and closes the log.
func (l *runLog) Close() {
	if l == nil {
		return
	}
	l.Flush()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.f.Close()
}

// logTime is a time in the log: local, with its offset, as the log's name
// (iterate-YYYYMMDD-HHMMSS, local time) uses the same clock.
func logTime(t time.Time) string { return t.Local().Format(time.RFC3339Nano) }
