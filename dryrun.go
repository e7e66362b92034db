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
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
	r.dryRunOf = relPath(r.env.projectRoot, ws.StateDir)
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
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
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

// removeTemporaries removes what the run made for itself alone: the dry
// run's scratch copy and the system prompt's file.
func (r *runPlan) removeTemporaries() {
	if r.promptFile != "" {
		os.Remove(r.promptFile)
	}
	if r.scratch != "" {
		os.RemoveAll(r.scratch)
	}
}
