package main

// This file keeps a dry run away from real workspaces. The rules are: a dry
// run works on a scratch copy of the workspace's files in a temporary
// directory (its logs and a live run's own state left out: its lock, its
// run state, its stop request, its events), so that the real workspace's
// files stay byte for byte as they were — its progress, status, counters,
// costs and logs; the copy is removed when the run ends. Only a demo workspace that
// does not exist yet is created for real, as the first command a new user
// types asks for one.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// useScratch returns a workspace like ws whose state lives in a scratch copy.
// In ralph mode only the state directory is copied: the agent's files are
// the project's, and the mock agent writes none of them.
func (r *runPlan) useScratch(ws *workspace) (*workspace, error) {
	dir, err := os.MkdirTemp("", "claude-iterate-dry-run-")
	if err != nil {
		return nil, fmt.Errorf("making a scratch copy for the dry run: %w", err)
	}
	r.scratch = dir
	r.dryRunOf, r.realWS = relPath(r.env.projectRoot, ws.StateDir), ws
	c := *ws
	c.StateDir = filepath.Join(dir, filepath.Base(ws.StateDir))
	if !ws.Ralph {
		c.Dir = c.StateDir
	}
	if err := copyTree(ws.StateDir, c.StateDir); err != nil {
		return nil, fmt.Errorf("making a scratch copy of %s for the dry run: %w", r.dryRunOf, err)
	}
	return &c, nil
}

// runOwnFiles are the files of a workspace that belong to the run working on
// it, not to the task. A dry run copying the lock would take the live run
// for a killed one and end its agent; it writes its own events.
var runOwnFiles = map[string]bool{lockFile: true, runStateFile: true, stopFile: true, runEventsFile: true}

// copyTree copies the directories, regular files and symbolic links under
// src to dst, leaving out src's logs directory and a run's own files. A
// missing src is an empty tree.
func copyTree(src, dst string) error {
	if err := makeDirAll(dst, 0o700); err != nil {
		return err
	}
	err := walkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == src && os.IsNotExist(err) {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case p == src:
			return nil
		case d.IsDir() && rel == logsDir:
			return fs.SkipDir
		case runOwnFiles[rel]:
			return nil
		case d.IsDir():
			return makeDirAll(to, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return nil // a FIFO, socket or device: not the task's
	})
	return err
}

// copyFile copies the regular file src to dst, with its permissions.
func copyFile(src, dst string) error {
	in, fi, err := openRegular(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := createFile(dst, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// liveDryRuns returns the dry runs going on of the workspace whose state
// directory is stateDir, oldest first: the registry's live entries that
// say they copied it. Their Dir and StateDir are their scratch copies'.
func liveDryRuns(stateDir string) []runEntry {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return nil
	}
	entries, _ := liveEntries(nil)
	var out []runEntry
	for _, e := range entries {
		if e.DryRunOf != "" && sameDir(e.DryRunOf, abs) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// dryRunOnly returns the dry runs of w going on when no real run of w is
// going on (nil when one is, or none is): the runs that stop, watch and
// logs of w reach then.
func dryRunOnly(w *workspace) []runEntry {
	if w.runningPID() != 0 {
		return nil
	}
	return liveDryRuns(w.StateDir)
}

// orRalphDryRun is for a command given no workspace (pos) that could not
// look one up (err): in a directory with no ralph-mode state, it returns
// the ralph-mode workspace and its dry runs going on, which write nothing
// in the directory. Otherwise (no dry run, another workspace, or an error
// other than a missing state, which is said as it is) it returns err.
func orRalphDryRun(env *cliEnv, pos []string, err error) (*workspace, []runEntry, error) {
	if len(pos) != 0 || !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	w := ralphWorkspace(env.projectRoot)
	dry := liveDryRuns(w.StateDir)
	if len(dry) == 0 {
		return nil, nil, err
	}
	return w, dry, nil
}

// dryRunWorkspace is the scratch copy that the dry run e works on, loaded.
func dryRunWorkspace(e runEntry) (*workspace, error) {
	w := &workspace{Name: e.Workspace, Dir: e.Dir, StateDir: e.StateDir, Ralph: e.Ralph}
	if err := w.load(); err != nil {
		return nil, fmt.Errorf("the dry run of %s (pid %d) ended, or its scratch copy cannot be read: %w", e.Workspace, e.PID, err)
	}
	return w, nil
}

// scratchOf says where the dry run e works, for a message.
func scratchOf(e runEntry) string {
	return "on a scratch copy (" + e.StateDir + ")"
}

// removeTemporaries removes what the run made for itself alone: the dry
// run's scratch copy and the system prompt's file.
func (r *runPlan) removeTemporaries() {
	if r.promptFile != "" {
		os.Remove(r.promptFile)
	}
	if r.scratch != "" {
		waitForWatchers(r.scratch)
		os.RemoveAll(r.scratch)
	}
}

// scratchGrace bounds how long a dry run's end waits for the watchers of
// its scratch copy to read how it ended (watch reads every watchPoll).
const scratchGrace = 2 * time.Second

// waitForWatchers waits until no watch holds the scratch directory
// (holdScratch), or scratchGrace has passed.
func waitForWatchers(dir string) {
	d, err := openDir(dir)
	if err != nil {
		return
	}
	defer d.Close()
	for deadline := time.Now().Add(scratchGrace); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if flock(d, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			return
		}
	}
}

// holdScratch holds the scratch copy of the dry run e for a watch, which
// closes it once it has read how the run ended: the dry run removes its
// copy, the state file saying how it ended with it, only after that
// (waitForWatchers). nil when it cannot.
func holdScratch(e runEntry) *os.File {
	d, err := openDir(filepath.Dir(e.StateDir))
	if err != nil {
		return nil
	}
	if flock(d, syscall.LOCK_SH|syscall.LOCK_NB) != nil {
		d.Close()
		return nil
	}
	return d
}

// createDemo makes the workspace of a first dry run.
func createDemo(env *cliEnv, workspacesDir, name string, quiet bool) (*workspace, error) {
	w, err := locateNewWorkspace(env.projectRoot, workspacesDir, name)
	if err != nil {
		return nil, err
	}
	w.meta = &metadata{Name: name, Mode: modeLoop, Created: time.Now().UTC().Truncate(time.Second), Status: statusNew}
	created, err := createWorkspaceDir(w, name)
	if err != nil {
		return nil, err
	}
	if err := writeWorkspaceFiles(w, dryRunDemoInstructions); err != nil {
		removeCreated(w, created)
		return nil, err
	}
	if err := w.load(); err != nil {
		return nil, err
	}
	if !quiet {
		fmt.Fprintf(env.stdout, "Created demo workspace %s (%s) for the dry run\n", name, relPath(env.projectRoot, w.Dir))
	}
	return w, nil
}
