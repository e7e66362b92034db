package main

// This file implements the registry of live runs: every run on the machine
// registers itself in the user's state directory, so that 'ps', 'watch
// --all' and 'serve' find them all, whatever their project. The rules are:
//
//   - The directory is $XDG_STATE_HOME/claude-iterate/runs/, by default
//     ~/.local/state/claude-iterate/runs/ (on macOS too: the same XDG
//     fallback). One file per run, <id>.json, written once when the run
//     starts, through the one writer, and removed on every way out of the
//     run (its end, an error, a signal, a recovered panic): a run's
//     iterations never touch it.
//   - An entry holds the run's pid and process start time, its project,
//     workspace, agent, and where its state file and events are. What the
//     run is doing is read from the files the run already writes (the state
//     file, live.go; the metadata, for a question), never asked of the run.
//   - An entry whose process is gone, or whose pid is now another
//     process's (its start time differs), is dead: left by kill -9 or a
//     reboot. It is never trusted and never signalled, and the next reader
//     removes it.
//   - A run never fails because the registry cannot be written: it warns
//     once, and runs unregistered.
//   - An entry removed or replaced during the run (heldfile.go's rule for
//     the files a run keeps) is written again at the run's next look
//     around (runLock.lookAround), with one warning: a link or a FIFO in
//     its place is replaced (a rename, never a write through the link); a
//     directory there cannot be, and the run goes on unregistered.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// registryCap bounds a registry entry.
const registryCap = 64 << 10

// runEntry is a registry entry: one live run.
type runEntry struct {
	ID    string `json:"id"` // the run's id (runRecord.RunID), its file's name
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // processStart of the run: a reused pid is another process
	// Project is the run's project root; Dir and StateDir its workspace's
	// (they differ in ralph mode).
	Project   string `json:"project"`
	Workspace string `json:"workspace"`
	Dir       string `json:"dir"`
	StateDir  string `json:"stateDir"`
	Ralph     bool   `json:"ralph,omitempty"`
	Agent     string `json:"agent"`
	// DryRunOf is, for a dry run (whose Dir and StateDir are its scratch
	// copy's), the state directory of the workspace it copied: stop,
	// watch, status and logs of that workspace find the dry run by it.
	DryRunOf string `json:"dryRunOf,omitempty"`
	// State is the run's state file (live.go); Events its events file,
	// runEventsFile in its state directory, whatever --events says ("":
	// the file was refused, or the entry is an older binary's, which
	// pointed at a regular --events file only).
	State   string    `json:"state"`
	Events  string    `json:"events,omitempty"`
	Started time.Time `json:"started"`

	// Checkout is the top of the work tree the run's agent works in, its
	// real path ("" outside one, or an older binary's entry); Commits: the
	// run commits there (checkoutlock.go).
	Checkout string `json:"checkout,omitempty"`
	Commits  bool   `json:"commits,omitempty"`
}

// registryDir is the directory of the registry, "" when there is no home
// to put it in.
func registryDir() string {
	b, ok := stateBase()
	if !ok {
		return ""
	}
	return filepath.Join(b.own(), "runs")
}

// registration is a run's entry in the registry, removed once.
type registration struct {
	once sync.Once
	path string
	// mu guards what follows: entry as written, written its file as
	// written (nil: unknown), removed once remove has run.
	mu      sync.Mutex
	entry   runEntry
	written os.FileInfo
	removed bool
}

// keep writes the entry again when it was removed or replaced during the
// run, and returns the warning to say ("" when it is in place).
func (g *registration) keep() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.removed {
		return ""
	}
	if fi, err := os.Lstat(g.path); err == nil && g.written != nil && sameWritten(fi, g.written) {
		return ""
	}
	// A link or a FIFO there is replaced (a rename): the entry is the
	// run's own, and the views find the run by it (tryout6 #5).
	_, replaced, err := writeEntryOver(g.entry, true)
	if err != nil {
		g.removed = true // said once; the run goes on unregistered
		hint := ""
		if he := (*hintError)(nil); errors.As(err, &he) {
			err, hint = he.err, " ("+he.hint+")"
		}
		return replacedMsg(g.path, fmt.Sprintf("%v; 'claude-iterate ps' does not show this run any more%s", unwrapPathError(err), hint))
	}
	g.written, _ = os.Lstat(g.path)
	if replaced != nil {
		return replacedMsg(g.path, fmt.Sprintf("%v; written again in its place", unwrapPathError(replaced)))
	}
	return replacedMsg(g.path, "written again")
}

// sameWritten reports whether fi is still the file written, described by
// was. The file is not held open, so its inode number is free once it is
// removed: a link or a FIFO made in its place at once often gets the same
// one (tryout6 #5: the run saw no change), but not its kind, nor its times.
func sameWritten(fi, was os.FileInfo) bool {
	return os.SameFile(fi, was) && fi.Mode() == was.Mode() && fi.Size() == was.Size() && fi.ModTime().Equal(was.ModTime())
}

// registerRun writes the run's entry; a failure is a warning, and the run
// goes on unregistered. events is the run's own events file (nil: it was
// refused).
func registerRun(r *runner, events *eventWriter) *registration {
	start, _ := processStart(os.Getpid())
	e := runEntry{ID: r.lock.record.RunID, PID: os.Getpid(), Start: start, Project: r.env.projectRoot,
		Workspace: r.ws.Name, Dir: r.ws.Dir, StateDir: r.ws.StateDir, Ralph: r.ws.Ralph,
		Agent: r.agent.name(), State: r.ws.statePath(), Started: r.start.UTC()}
	if r.realWS != nil {
		e.DryRunOf, _ = filepath.Abs(r.realWS.StateDir)
	}
	if h := r.lock.checkout; h != nil {
		e.Checkout, e.Commits = h.top, h.commits
	}
	if events != nil {
		if abs, err := filepath.Abs(events.name); err == nil {
			e.Events = abs
		}
	}
	path, err := writeEntry(e)
	if err != nil {
		r.con.errorf("warning: cannot register the run: %v ('claude-iterate ps' does not show it)", err)
		r.log.printf("WARNING: cannot register the run: %v", err)
		return nil
	}
	g := &registration{path: path, entry: e}
	g.written, _ = os.Lstat(path)
	return g
}

// writeEntry writes e into the registry and returns its path.
func writeEntry(e runEntry) (string, error) {
	path, _, err := writeEntryOver(e, false)
	return path, err
}

// writeEntryOver is writeEntry; with over, a link or a FIFO at its path
// is replaced (writeFileReplacing), and replaced says what was there.
func writeEntryOver(e runEntry, over bool) (path string, replaced, err error) {
	dir := registryDir()
	if dir == "" {
		return "", nil, errors.New("no state directory: $HOME and $XDG_STATE_HOME are unset")
	}
	if b, _ := stateBase(); b.usable() != nil {
		return "", nil, b.usable() // never a HOME made (tryout 7)
	}
	if err := makeDirAll(dir, 0o700); err != nil {
		return "", nil, stateDirError(dir, err)
	}
	data, err := json.MarshalIndent(&e, "", "  ")
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, e.ID+".json")
	// Not fsynced: after a crash of the machine, the entry is dead anyway.
	if over {
		replaced, err = writeFileReplacing(path, append(data, '\n'), 0o600, false)
	} else {
		err = writeFileAtomicSync(path, append(data, '\n'), 0o600, false)
	}
	if err != nil && !over { // over: the caller names the path
		err = fmt.Errorf("writing %s: %w", path, unwrapPathError(err))
	}
	if err != nil {
		return "", nil, err
	}
	return path, replaced, nil
}

// remove unregisters the run; later calls do nothing. A nil registration
// (none written) does nothing.
func (g *registration) remove() {
	if g == nil {
		return
	}
	g.once.Do(func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.removed = true
		os.Remove(g.path)
	})
}

// validRunID reports whether id can be a run's id: what acquireRunLock
// makes ("<pid>-<nanoseconds>"), nothing that could leave the directory.
func validRunID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// registryReadError is the error of reading the registry dir, for ps,
// watch --all and serve: something that is no directory there (a FIFO, a
// file) is named, with the command that removes it (tryout5), never
// removed here.
func registryReadError(dir string, err error) error {
	fi, lerr := os.Lstat(dir)
	if lerr != nil || fi.IsDir() {
		if p, pfi := notDirOnPath(filepath.Dir(dir)); p != "" { // a parent, not the registry itself
			return withHint(fmt.Errorf("reading the registry of runs %s: %s is not a directory (%s)", dir, p, fileKind(pfi)), "%s", stateDirHint(p))
		}
		return fmt.Errorf("reading the registry of runs %s: %w", dir, unwrapPathError(err))
	}
	return withHint(fmt.Errorf("reading the registry of runs %s: not a directory (%s)", dir, fileKind(fi)),
		"it is where the runs going on are listed: remove it (%s); the next run makes the directory again", removeCommand(dir, dir))
}

// notDirOnPath is dir, or the nearest of its parents, that is there and
// is no directory (a FIFO, a file; a link to a directory is one): what
// keeps dir from being made or read; "" when none is. fi is its Lstat.
func notDirOnPath(dir string) (string, os.FileInfo) {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil {
			if st.IsDir() {
				return "", nil
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return "", nil
			}
			return p, fi
		}
		if filepath.Dir(p) == p {
			return "", nil
		}
	}
}

// stateDirHint says what to do with p, no directory where the tool's
// state directory (the registry, serve's token) goes.
func stateDirHint(p string) string {
	if b, ok := stateBase(); ok && !within(b.own(), p) {
		return notOwnHint(b, p)
	}
	return fmt.Sprintf("it is where claude-iterate keeps the state of its runs: remove it (%s); the next run makes the directory again", removeCommand(p, p))
}

// stateDirError is the error of making the state directory dir (the
// registry, or serve's): what is in the way named, with the command that
// removes it.
func stateDirError(dir string, err error) error {
	e := fmt.Errorf("making %s: %w", dir, unwrapPathError(err))
	if p, fi := notDirOnPath(dir); p == dir {
		return withHint(fmt.Errorf("making %s: not a directory (%s)", dir, fileKind(fi)), "%s", stateDirHint(p))
	} else if p != "" {
		return withHint(fmt.Errorf("making %s: %s is not a directory (%s)", dir, p, fileKind(fi)), "%s", stateDirHint(p))
	}
	return e
}

// liveEntries reads the registry: the live runs' entries, sorted by
// name. A dead entry (its process gone, or its pid another process's now)
// is removed; a file that is not an entry is left alone. known caches the
// entries read before, by file name (an entry is written once, never
// changed); nil: none.
func liveEntries(known map[string]runEntry) ([]runEntry, error) {
	dir := registryDir()
	if dir == "" {
		return nil, nil
	}
	names, err := readDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, registryReadError(dir, err)
	}
	var out []runEntry
	seen := map[string]bool{}
	for _, d := range names {
		id, ok := strings.CutSuffix(d.Name(), ".json")
		if !ok || !validRunID(id) || !d.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, d.Name())
		e, ok := known[d.Name()]
		if !ok {
			data, err := readRegularFile(path, registryCap)
			if err != nil {
				continue // removed meanwhile: the run ended
			}
			if json.Unmarshal(data, &e) != nil || e.ID != id {
				continue // not an entry: not the registry's to remove
			}
		}
		if !entryAlive(e) {
			os.Remove(path)
			continue
		}
		if known != nil {
			known[d.Name()] = e
			seen[d.Name()] = true
		}
		out = append(out, e)
	}
	for name := range known {
		if !seen[name] {
			delete(known, name)
		}
	}
	return out, nil
}

// entryAlive reports whether e's run is alive: its pid is a live process
// that started when the run did. An entry without a start time is taken
// for dead: its pid cannot be told from a reused one.
func entryAlive(e runEntry) bool {
	if e.PID <= 0 || e.Start == 0 {
		return false
	}
	start, ok := processStart(e.PID)
	return ok && start == e.Start
}
