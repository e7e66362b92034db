package main

// This file implements the one-run-per-workspace lock and the clean-up after
// a run that was killed. The rules are:
//
//   - A run holds an advisory lock (flock) on <state>/.lock for its whole
//     life. The kernel releases it when the process dies, however it dies,
//     so the lock is never stale: a pid left in .metadata.json by a run
//     killed with SIGKILL (and maybe reused since) never locks a workspace
//     out, and a second run of the same workspace fails at once, naming
//     the pid of the first.
//   - The lock file records the run: its pid, an id unique to the run, and
//     the pid and start time of each child it started (a start time, so
//     that a reused pid is never touched). Every child gets the id in its
//     environment (CLAUDE_ITERATE_RUN), and the workspace's marker
//     (CLAUDE_ITERATE_WORKSPACE_ID), which its own children inherit.
//   - When a run finds that an earlier run did not end cleanly (the tool
//     was killed with SIGKILL, or crashed), it ends what that run left
//     running, with SIGTERM then SIGKILL, and says so, before it starts an
//     agent (leftovers.go: which processes, and which record is trusted).
//   - The record names the state directory it was written for (its device
//     and inode): a record copied into another directory is not trusted.
//   - status, list and stop ask the lock, never the pid, whether a run is
//     going on.
//   - The agent may delete or replace .lock. The run therefore also locks
//     the state directory itself (which the agent cannot replace without
//     deleting the workspace), and every command that asks the lock asks
//     both; and the run puts its .lock back (a new file, locked, renamed
//     into place), or its record if it was overwritten, at its next look.
//   - The record lists the run's processes as they appear, not only the
//     children it started: every second, the run's descendants (pid and
//     start time) that are alive. A process that dropped CLAUDE_ITERATE_RUN
//     from its environment and left the tree after a kill -9 of the tool is
//     still found by the next run.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	lockFile = ".lock"
	// runIDEnv carries a run's id to every process it starts.
	runIDEnv = "CLAUDE_ITERATE_RUN"
)

// runRecord is the content of the lock file.
type runRecord struct {
	PID   int    `json:"pid"`
	RunID string `json:"runId"`
	// Ended is set when the run ended cleanly.
	Ended bool `json:"ended,omitempty"`
	// Children are the processes the run started.
	Children []recordedProc `json:"children,omitempty"`
	// Dir is the identity of the state directory the record was written
	// for (dirIdentity): a copy of the record elsewhere is not trusted.
	Dir string `json:"dir,omitempty"`
	// Start is the run's own start time (processStart): its processes
	// started after it, and a live process with its pid and start time
	// is the run itself.
	Start uint64 `json:"start,omitempty"`
}

// recordedProc is a process the run started: pid and start time.
type recordedProc struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// maxRecorded bounds the record: the agents of a long run are not all kept.
const maxRecorded = 256

// runLock is a held workspace lock.
type runLock struct {
	mu     sync.Mutex
	f      *os.File // .lock
	dir    *os.File // the state directory, locked too
	path   string
	record runRecord
	// size is the length of the record last written over the whole of f,
	// which write pads a shorter record to; 0: unknown (f is truncated).
	size int
	// dirID is the identity of the locked state directory (dirIdentity).
	dirID string
	// reg is the run's entry in the registry of live runs (registry.go),
	// removed as the lock is released; nil for none.
	reg *registration
	// checkout is the run's hold on its checkout (checkoutlock.go), let
	// go as the lock is released; nil for none.
	checkout *checkoutHold
	// warn says that .lock was removed or replaced (keepFile); lostSaid:
	// that it could not be put back, said once.
	warn     func(msg string)
	lostSaid bool
}

// errLocked is a workspace another run holds, or (claim) another command
// that changes it (claimWorkspace).
type errLocked struct {
	ws    string
	pid   int
	claim bool
}

func (e *errLocked) Error() string {
	if e.claim {
		return fmt.Sprintf("workspace %s is being changed by another command (config set, edit, reset, setup, archive or clean)", e.ws)
	}
	if e.pid > 0 {
		return fmt.Sprintf("workspace %s is already being run (pid %d)", e.ws, e.pid)
	}
	return fmt.Sprintf("workspace %s is already being run", e.ws)
}

func (w *workspace) lockPath() string { return filepath.Join(w.StateDir, lockFile) }

// acquireRunLock takes the workspace's lock for this run, and returns the
// record the previous run left in it (zero if none).
func acquireRunLock(w *workspace) (*runLock, runRecord, error) {
	var prev runRecord
	path := w.lockPath()
	dir, held, err := lockStateDir(w, syscall.LOCK_EX)
	for deadline := time.Now().Add(claimWait); held && claimHolds(w) && time.Now().Before(deadline); {
		dir, held, err = lockStateDir(w, syscall.LOCK_EX) // another command's claim: a moment
	}
	if err != nil {
		return nil, prev, fmt.Errorf("locking %s: %w", w.StateDir, unwrapPathError(err))
	}
	if held && claimHolds(w) {
		return nil, prev, &errLocked{ws: w.Name, claim: true}
	}
	if held {
		pid := 0
		if f, _, err := openRegular(path); err == nil {
			pid = readRecord(f).PID
			f.Close()
		}
		return nil, prev, &errLocked{ws: w.Name, pid: pid}
	}
	f, err := openLockFile(path)
	if err != nil {
		closeFile(dir)
		return nil, prev, lockFileError(w, err)
	}
	// A status or stop probing the lock holds it shared for an instant:
	// try again for a moment before believing another run has it.
	for tries := 0; ; tries++ {
		err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			closeFile(dir)
			return nil, prev, fmt.Errorf("locking %s: %w", path, err)
		}
		rec := readRecord(f)
		if (rec.PID > 0 && rec.PID != os.Getpid() && processAlive(rec.PID)) || tries >= 20 {
			f.Close()
			closeFile(dir)
			return nil, prev, &errLocked{ws: w.Name, pid: rec.PID}
		}
		time.Sleep(10 * time.Millisecond)
	}
	prev = readRecord(f)
	l := &runLock{f: f, dir: dir, path: path, record: runRecord{PID: os.Getpid(), RunID: fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())}}
	if dir != nil {
		if fi, err := dir.Stat(); err == nil {
			l.dirID = dirIdentity(fi)
		}
	}
	l.record.Dir = l.dirID
	w.stateID = l.dirID
	l.record.Start, _ = processStart(os.Getpid())
	l.write()
	return l, prev, nil
}

// lockFileError is the error of a .lock that cannot be opened, found
// while the caller holds the state directory's lock, so that no run holds
// the workspace: a link, a FIFO or a directory there (left by an agent, or
// a user) is then safe to remove, and the hint says so.
func lockFileError(w *workspace, err error) error {
	err = fmt.Errorf("opening the run lock %s: %w", w.lockPath(), unwrapPathError(err))
	if errors.Is(err, errNotRegular) {
		return withHint(err, "remove %s (safe: no run holds workspace %s), then try again", w.lockPath(), w.Name)
	}
	return err
}

// lockStateDir locks w's state directory (how: LOCK_EX or LOCK_SH) without
// waiting; held reports that another process holds it. With LOCK_EX it
// returns the locked directory, to close to unlock it (nil when the state
// directory does not exist yet); LOCK_SH only probes.
func lockStateDir(w *workspace, how int) (d *os.File, held bool, err error) {
	d, err = openDir(w.StateDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	// A status probing the directory holds it shared for an instant.
	for tries := 0; ; tries++ {
		err = flock(d, how|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || how == syscall.LOCK_SH || tries >= 20 {
			d.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, true, nil
			}
			return nil, false, err
		}
		time.Sleep(10 * time.Millisecond)
	}
	if how == syscall.LOCK_SH {
		d.Close()
		return nil, false, nil
	}
	return d, false, nil
}

// closeFile closes f unless it is nil.
func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// readRecord reads a lock file's record; a missing or damaged one is zero.
func readRecord(f *os.File) runRecord {
	var rec runRecord
	json.Unmarshal(readAtMost(f, lockRecordCap), &rec)
	return rec
}

// write replaces the lock file's content with the record, after putting
// back the lock file if it was deleted or replaced. l.mu is held. Every
// agent started is written down, so the write is one pwrite over the last
// record, padded with spaces to its length (JSON takes them as white
// space): a truncation would cost the file system more than the rest of
// starting the agent.
func (l *runLock) write() {
	l.keepFile()
	data := l.encoded()
	if l.size == 0 {
		l.f.Truncate(0)
	}
	if _, err := l.f.WriteAt(data, 0); err != nil {
		l.size = 0 // what is in the file is unknown
		return
	}
	l.size = len(data)
}

// encoded is the record as write writes it: padded to l.size, ended by a
// newline. l.mu is held.
func (l *runLock) encoded() []byte {
	data, _ := json.Marshal(l.record)
	if pad := l.size - len(data) - 1; pad > 0 {
		data = append(data, bytes.Repeat([]byte{' '}, pad)...)
	}
	return append(data, '\n')
}

// keepFile puts a new lock file, locked, in place of one that was deleted
// or replaced (heldfile.go), in the state directory the run locked: never
// in another directory put at its path (the workspace replaced by a copy),
// whose run it would lock out and whose record it would overwrite; nor over
// a link, a FIFO or a directory put there (the one writer's rule), which
// the run then says once: it still holds the workspace by the lock of its
// directory. l.mu is held.
func (l *runLock) keepFile() {
	if heldAt(l.f, l.path) {
		return
	}
	if d, err := os.Stat(filepath.Dir(l.path)); l.dir != nil && (err != nil || !sameFile(d, l.dir)) {
		return
	}
	tmp := l.path + ".new"
	os.Remove(tmp)
	// Exclusive: a file put at that name meanwhile (the agent's, or a
	// hard link to one elsewhere) is neither written nor put in place.
	f, err := openFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil && !errors.Is(err, os.ErrExist) && !errors.Is(err, errNotRegular) {
		return // the state directory is gone: the workspace check says so
	}
	if err == nil {
		err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err == nil {
		err = renameNoFollow(tmp, l.path)
	}
	if err != nil {
		if f != nil {
			f.Close()
			os.Remove(tmp)
		}
		if !l.lostSaid {
			l.lostSaid = true
			l.say(replacedMsg(l.path, fmt.Sprintf("%v; the run still holds the workspace (by the lock of its directory): remove it once the run has ended", unwrapPathError(err))))
		}
		return
	}
	l.f.Close()
	l.f, l.size = f, 0
	l.say(replacedMsg(l.path, "put back"))
}

// say gives msg to l.warn, if set.
func (l *runLock) say(msg string) {
	if l.warn != nil {
		l.warn(msg)
	}
}

// addChild records a child the run started, with the start time its
// starter read off the clock when it could (reading /proc/PID/stat while
// the child execs costs more than the rest of recording it).
func (l *runLock) addChild(c *child) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	start, ok := c.startTick, c.startTick != 0 && startTicksTrusted(c.pid, c.startTick)
	if !ok {
		start, ok = processStart(c.pid)
	}
	if ok && l.addLocked(c.pid, start) {
		l.write()
	}
}

// dropChild takes a child the run has waited for out of the record (the
// next write leaves it out): a long run's record stays the size of what
// runs now, not of every agent it started.
func (l *runLock) dropChild(pid int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.record.Children[:0]
	for _, c := range l.record.Children {
		if c.PID != pid {
			kept = append(kept, c)
		}
	}
	l.record.Children = kept
}

// addLocked adds a process to the record unless it is there; l.mu is held.
func (l *runLock) addLocked(pid int, start uint64) bool {
	for _, c := range l.record.Children {
		if c.PID == pid && c.Start == start {
			return false
		}
	}
	l.record.Children = append(l.record.Children, recordedProc{PID: pid, Start: start})
	if len(l.record.Children) > maxRecorded {
		l.record.Children = l.record.Children[len(l.record.Children)-maxRecorded:]
	}
	return true
}

// lookAround records the run's descendants as they appear, drops those
// that ended, and puts back a deleted, replaced or overwritten .lock. The
// run calls it at each of the supervisor's look-arounds (every second, or
// every 5 s when nobody watches the run live): a timer of its own would wake
// the tool more often, which is most of what an idle run costs.
func (l *runLock) lookAround() {
	if l == nil {
		return
	}
	var live []procInfo
	if hasChildren() {
		var ok bool
		if live, ok = ownDescendants(); !ok {
			live = descendants(os.Getpid(), listProcs())
		}
	}
	l.mu.Lock()
	if l.f == nil {
		l.mu.Unlock()
		return
	}
	changed := l.pruneLocked()
	for _, p := range live {
		if p.state == 'Z' {
			continue
		}
		start, ok := p.start, p.start != 0
		if !ok {
			start, ok = processStart(p.pid)
		}
		if ok && l.addLocked(p.pid, start) {
			changed = true
		}
	}
	if fi, err := os.Lstat(l.path); err != nil || !sameFile(fi, l.f) {
		changed = true // deleted or replaced
	} else if !bytes.Equal(readAtMost(l.f, lockRecordCap), l.encoded()) {
		changed = true // overwritten, or a child dropped since the last write
		l.size = 0     // rewritten whole: someone may have made it longer
	}
	if changed {
		l.write()
	}
	l.mu.Unlock()
	if msg := l.reg.keep(); msg != "" {
		l.say(msg)
	}
}

// pruneLocked drops the recorded processes that ended; l.mu is held.
func (l *runLock) pruneLocked() bool {
	kept := l.record.Children[:0]
	for _, c := range l.record.Children {
		if start, ok := processStart(c.PID); ok && start == c.Start {
			kept = append(kept, c)
		}
	}
	changed := len(kept) != len(l.record.Children)
	l.record.Children = kept
	return changed
}

// sameFile reports whether fi is the file f has open.
func sameFile(fi os.FileInfo, f *os.File) bool {
	held, err := f.Stat()
	return err == nil && os.SameFile(fi, held)
}

// release marks the run ended cleanly, unregisters it and drops the lock;
// a second call does nothing.
func (l *runLock) release() {
	l.drop(func() {
		l.record.Ended = true
		l.record.Children = nil
	})
}

// releaseAs drops the lock leaving rec in .lock, not this process's
// record: stop ends a killed run's leftovers under the lock, and the next
// run must still find that run's record, not ended (runsetup.go takes its
// totals back from the history, a commit recovers its work in its name).
func (l *runLock) releaseAs(rec runRecord) {
	l.drop(func() { l.record = rec })
}

// drop sets the record (set), writes it, unregisters the run and drops
// the lock; a second call does nothing.
func (l *runLock) drop(set func()) {
	if l == nil {
		return
	}
	l.reg.remove()
	l.checkout.release()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	set()
	l.write()
	l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	closeFile(l.dir)
	l.dir = nil
}

// lockHolder reports whether a run holds the workspace's lock, and its pid
// (0 when its .lock was deleted): the lock of .lock, or of the state
// directory.
func lockHolder(w *workspace) (pid int, held bool) {
	f, _, err := openRegular(w.lockPath())
	if err == nil {
		defer f.Close()
		if err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
			flock(f, syscall.LOCK_UN)
		} else if errors.Is(err, syscall.EWOULDBLOCK) {
			return readRecord(f).PID, true
		}
	}
	if _, held, _ := lockStateDir(w, syscall.LOCK_SH); held {
		if f != nil {
			return readRecord(f).PID, true
		}
		return 0, true
	}
	return 0, false
}

// processAlive reports whether pid is a live process (not a zombie).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie has no start time: one process's entry, not a scan of all.
	_, ok := processStart(pid)
	return ok
}

// describePIDs lists pids for a message.
func describePIDs(pids []int) string {
	var s []string
	for _, p := range pids {
		s = append(s, fmt.Sprint(p))
	}
	return strings.Join(s, ", ")
}

// flock applies an advisory lock operation to f.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}
