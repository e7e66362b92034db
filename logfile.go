package main

// This file implements the per-run log, logs/iterate-YYYYMMDD-HHMMSS.log in
// the workspace. The rules are: mode 0600 (it holds code and prompts); a
// header, the run's metadata, the instructions and the system prompt once,
// then each iteration; writes are buffered (at most 10 KiB) and flushed at
// every iteration end and on every exit path, signals included; a log that
// cannot be written disables logging with one warning and the run goes on.
//
// The log must never take the room the run's state needs (a disk filled by
// the log once left a run whose final save failed): transcripts stop being
// logged, with one warning, once the log passes logBudget or the device has
// less than logLowSpace left (looked at every logSpaceCheck bytes and at
// every flush); the run's sections (its start, each iteration's end, its
// end) are still logged. A reserve file of logReserve bytes, made with the
// log, is kept until the run's end (releaseReserve, or the log's close or
// failure), and removed before its last writes, so that the metadata, the
// history and the log's RUN ENDED have room even when the agent filled the
// device: freed any sooner, the agent would take it. A write that finds
// the device full (ENOSPC, EDQUOT) loses what it held, stops the
// transcripts with one warning, and is kept (noSpaceErr): the run ends on
// it; the sections after it are still tried.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

const logBufferSize = 10 << 10

const (
	logBudget     = 1 << 30 // at most this much transcript in one log
	logLowSpace   = 4 << 20 // transcripts stop when the device has less left
	logSpaceCheck = 1 << 20 // free space is looked at every this many bytes
	// and, at a flush, if it was last looked at this long ago: a run
	// flushes its log several times per iteration, and a look (statfs) at
	// each would cost more than the rest of the flush.
	logSpaceInterval = time.Second
	logReserve       = 1 << 20 // room kept for the state files
)

const logRule = "================================================================================"

// runLog is the log of one run. It is safe for concurrent use; a nil *runLog
// discards everything.
type runLog struct {
	mu     chan struct{} // the lock (lock, unlock): holds a token while taken
	path   string
	f      *os.File
	w      *bufio.Writer
	failed bool
	warn   func(error)

	// heldUp: a wait for the lock timed out (lock); heldUpSaid: its
	// warning was given; path0 is the log's first path, which it names
	// (path is the lock holder's).
	heldUp, heldUpSaid atomic.Bool
	path0              string

	budget, lowSpace int64                      // logBudget and logLowSpace (tests lower them)
	written          int64                      // bytes written
	checkAt          int64                      // written, when free space is looked at next
	spaceChecked     time.Time                  // when free space was last looked at
	free             func(string) (int64, bool) // freeSpace (tests replace it)
	full             bool                       // transcripts are no longer logged
	reserve          string
	reserveFile      os.FileInfo
	at               heldPath // the log's path, in the state directory above dir
	noSpace          error    // the first write that found the device full
}

// openRunLog creates the run's log in dir. warn is called once if writing
// fails later.
func openRunLog(dir string, start time.Time, warn func(error)) (*runLog, error) {
	if err := makeDirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, path, err := createLog(dir, "iterate-"+start.Local().Format("20060102-150405"), 1)
	if err != nil {
		return nil, err
	}
	l := &runLog{mu: make(chan struct{}, 1), path: path, path0: path, f: f, warn: warn, budget: logBudget, lowSpace: logLowSpace, free: freeSpace}
	l.at = newHeldPath(l.path, filepath.Dir(dir))
	l.w = bufio.NewWriterSize((*logFile)(l), logBufferSize)
	l.makeReserve(filepath.Join(dir, ".reserve"))
	return l, nil
}

// createLog creates a new log in dir, base.log (from = 1) or the first of
// base-<from>.log, base-<from+1>.log, … that is not there; 'logs' sorts
// each after the one before.
func createLog(dir, base string, from int) (*os.File, string, error) {
	var f *os.File
	var err error
	path := ""
	for i := from; i < from+99; i++ {
		path = filepath.Join(dir, base+".log")
		if i > 1 {
			path = filepath.Join(dir, fmt.Sprintf("%s-%d.log", base, i))
		}
		f, err = createFile(path, 0o600)
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	return f, path, err
}

// makeReserve writes the reserve file (best effort: without room for it,
// there is none to keep). Something else than a regular file in its place
// (a link, a FIFO, a directory) is left alone, with a warning.
func (l *runLog) makeReserve(path string) {
	t, err := newTempFile(path)
	if err != nil {
		if errors.Is(err, errNotRegular) && l.warn != nil {
			l.warn(fmt.Errorf("%s: %v; no room is kept for the run's state", path, unwrapPathError(err)))
		}
		return
	}
	defer t.discard()
	if _, err := t.Write(make([]byte, logReserve)); err != nil {
		return
	}
	if t.commit(path) == nil {
		l.reserve = path
		l.reserveFile, _ = os.Lstat(path)
	}
}

// freeReserve removes the reserve file, if it is still the one makeReserve
// made: another run's, at its path in a directory put in the place of the
// log's (a workspace replaced by a copy), is left alone. l.mu is held.
func (l *runLog) freeReserve() {
	if l.reserve != "" {
		if fi, err := os.Lstat(l.reserve); err == nil && l.reserveFile != nil && sameWritten(fi, l.reserveFile) {
			os.Remove(l.reserve)
		}
		l.reserve, l.reserveFile = "", nil
	}
}

// keepRoom stops the logging of transcripts when the log passed its budget
// or the device is almost full. It looks at the device every logSpaceCheck
// bytes, and at a flush (force) every logSpaceInterval. l.mu is held.
func (l *runLog) keepRoom(force bool) {
	over := l.written > l.budget
	if l.full || !over && l.written < l.checkAt && (!force || time.Since(l.spaceChecked) < logSpaceInterval) {
		return
	}
	l.checkAt, l.spaceChecked = l.written+logSpaceCheck, time.Now()
	free, ok := l.free(filepath.Dir(l.path))
	if !over && (!ok || free >= l.lowSpace) {
		return
	}
	l.full = true
	why := fmt.Sprintf("the log passed %d MiB", l.budget>>20)
	if !over {
		why = fmt.Sprintf("%d KiB left on its device", free>>10)
	}
	l.w.WriteString("[transcripts are no longer logged: " + why + "]\n")
	if l.warn != nil {
		l.warn(fmt.Errorf("%s: %s; transcripts are no longer logged, to keep room for the run's state", l.path, why))
	}
}

// logLockWait bounds a wait for the log's lock. Its holder writes a few
// KiB to a file, which takes far less; one that takes longer is stuck in
// a system call (a file system that hangs), and the run must not be stuck
// with it: the supervisor writes the log between its answers to signals,
// and the run's end writes it too (tryout6 #1: a log write that hung made
// the run deaf to every signal).
const logLockWait = 2 * time.Second

// lock takes the log's lock, waiting at most logLockWait. Past that, the
// log is held up: this write, and every one made while the holder is
// still stuck, is lost without a wait (one warning); the first write once
// it let go says in the log that some was lost.
func (l *runLog) lock() bool {
	select {
	case l.mu <- struct{}{}:
	default:
		if l.heldUp.Load() {
			return false
		}
		t := time.NewTimer(logLockWait)
		defer t.Stop()
		select {
		case l.mu <- struct{}{}:
		case <-t.C:
			if !l.heldUp.Swap(true) && !l.heldUpSaid.Swap(true) && l.warn != nil {
				l.warn(fmt.Errorf("writing log %s: a write does not return (its file system hangs?); the run goes on, and what it logs meanwhile is lost", l.path0))
			}
			return false
		}
	}
	if l.heldUp.Swap(false) && !l.failed && l.w != nil {
		l.w.WriteString("[some of this log was lost: a write to it did not return for a while]\n")
	}
	return true
}

// unlock lets the log's lock go.
func (l *runLog) unlock() { <-l.mu }

// Write implements io.Writer; it never fails, so that the transcript goes on
// to the screen whatever happens to the log.
func (l *runLog) Write(p []byte) (int, error) {
	if l == nil {
		return len(p), nil
	}
	if !l.lock() {
		return len(p), nil
	}
	defer l.unlock()
	l.write(p, false)
	return len(p), nil
}

// write logs p, unless it is a transcript (not always) and transcripts are
// no longer logged; l.mu is held.
func (l *runLog) write(p []byte, always bool) {
	l.keepRoom(false)
	if l.failed || (l.full && !always) {
		return
	}
	if _, err := l.w.Write(p); err != nil {
		l.fail(err)
	}
	l.written += int64(len(p))
}

func (l *runLog) fail(err error) {
	if isNoSpace(err) {
		l.w.Reset((*logFile)(l)) // what it held is lost; the next sections are tried
		if l.noSpace == nil {
			l.noSpace = &os.PathError{Op: "write", Path: l.path, Err: unwrapPathError(err)}
			l.full = true
			if l.warn != nil {
				l.warn(fmt.Errorf("writing log %s: %v; transcripts are no longer logged", l.path, unwrapPathError(err)))
			}
		}
		return
	}
	l.failed = true
	l.freeReserve()
	if l.warn != nil {
		l.warn(fmt.Errorf("writing log %s: %v; logging disabled for this run", l.path, unwrapPathError(err)))
	}
}

// logFile is the log's file as its buffer writes to it: each write first
// makes sure that the file is still the one at the log's path
// (stillThere). l.mu is held.
type logFile runLog

func (lf *logFile) Write(p []byte) (int, error) {
	l := (*runLog)(lf)
	if !l.stillThere() {
		return len(p), nil // said once; the rest of the run is not logged
	}
	return l.f.Write(p)
}

// stillThere makes sure the log's file is still the one at its path
// (heldfile.go): an agent may remove or replace it, or the logs
// directory, during the run. The rest of the log then goes to a new file
// created at the same path, which says so; when something is at that
// path (a link, a FIFO, a directory, or a file the run did not make: the
// agent's, never appended to), to a new file beside it (<name>-2.log, which 'logs' shows after it); when none can be
// made there (a link out of the workspace, a FIFO in the logs directory's
// place: never opened), the run goes on without a log; each with one
// warning. l.mu is held.
func (l *runLog) stillThere() bool {
	if l.failed || l.f == nil {
		return false
	}
	if !l.at.moved(l.f) {
		return true
	}
	l.f.Close()
	l.f = nil
	old, dir := l.path, filepath.Dir(l.path)
	open := func() (*os.File, error) {
		if err := makeDirAll(dir, 0o755); err != nil {
			if fi, lerr := os.Lstat(dir); lerr == nil && !fi.IsDir() && fi.Mode()&os.ModeSymlink == 0 {
				return nil, fmt.Errorf("%s is not a directory (%s)", dir, fileKind(fi))
			}
			return nil, err
		}
		return createHeld(l.path)
	}
	f, err := open()
	msg := ""
	switch {
	case err == nil:
		msg = replacedMsg(l.path, "the rest of the log goes to a new file")
	case errors.Is(err, os.ErrNotExist): // the workspace is gone: the run says so
	default:
		// Not a regular file there (or no room): the rest beside it.
		lost := "running without a log"
		if nf, path, nerr := createLog(dir, strings.TrimSuffix(filepath.Base(l.path), ".log"), 2); nerr == nil {
			lost = "the rest of the log goes to " + path
			l.path, l.at, f = path, newHeldPath(path, l.at.dir), nf
		}
		msg = replacedMsg(old, fmt.Sprintf("%v; %s", unwrapPathError(err), lost))
	}
	if msg != "" && l.warn != nil {
		l.warn(errors.New(msg))
	}
	if f == nil {
		l.failed = true
		l.freeReserve()
		return false
	}
	l.f = f
	f.WriteString("[" + replacedMsg("the log "+old, "this is the rest of the log") + "]\n")
	return true
}

// releaseReserve removes the reserve file, for the run's last writes, and
// says in the log what a full device lost of it.
func (l *runLog) releaseReserve() {
	if l == nil {
		return
	}
	if !l.lock() {
		return
	}
	defer l.unlock()
	l.freeReserve()
	if l.noSpace != nil {
		l.write([]byte("[some of this log was lost: no space left on its device]\n"), true)
	}
}

// noSpaceErr is the first write of the log that found its device full, or
// nil.
func (l *runLog) noSpaceErr() error {
	if l == nil {
		return nil
	}
	if !l.lock() {
		return nil
	}
	defer l.unlock()
	return l.noSpace
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
	if l == nil {
		return
	}
	if !l.lock() {
		return
	}
	defer l.unlock()
	l.write([]byte(b.String()), true)
}

// Flush writes the buffer to the file.
func (l *runLog) Flush() {
	if l == nil {
		return
	}
	if !l.lock() {
		return
	}
	defer l.unlock()
	l.keepRoom(true)
	if !l.failed {
		if err := l.w.Flush(); err != nil {
			l.fail(err)
		}
	}
}

// file is the log's file now: its path, or the new file the rest went to
// when it was replaced (stillThere); "" when the log is held up (lock).
func (l *runLog) file() string {
	if !l.lock() {
		return ""
	}
	defer l.unlock()
	return l.path
}

// Close flushes and closes the log.
func (l *runLog) Close() {
	if l == nil {
		return
	}
	l.Flush()
	if !l.lock() {
		return
	}
	defer l.unlock()
	l.freeReserve()
	if l.f != nil {
		l.f.Close()
	}
}

// logTime is a time in the log: local, with its offset, as the log's name
// (iterate-YYYYMMDD-HHMMSS, local time) uses the same clock.
func logTime(t time.Time) string { return t.Local().Format(time.RFC3339Nano) }
