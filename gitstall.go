package main

// This file keeps a run's git work going past a file git hangs on (tryout
// 6 defect 3: an agent that made sub/.gitignore a named pipe stalled the
// run 30 s at git status, then stopped its commits for the rest of the
// run with one line that named neither the file nor the commits): the
// file found after a time-out, here, and a run's scans paused and resumed
// around it (gitTree.gitBlocked, paused, scanFailed and scanned, in
// gitfiles.go). The rules are:
//
//   - A git command that does not answer within gitTimeout is followed by
//     one walk of its work tree for a .gitignore or .gitattributes that
//     is not a regular file (a named pipe git waits on, a device, a
//     socket: files gitexclude.go cannot name before git runs, deep in the
//     tree); the error names it, what it is and the 'rm' that fixes it, in
//     every command (run, status, list, merge, clean).
//   - In a run, before each git status, the file found so (by a scan or
//     by a commit's git add) and the exclude files gitexclude.go names are
//     looked at (stats only): while one is there git is not run — no
//     wait —, the history lists no changed files and the iterations are
//     not committed, each said (one warning with the fix, then a line per
//     iteration left uncommitted). Once it is gone git runs again and the
//     commits resume (in a worktree the next commit takes every change
//     left there, those of the iterations missed too), and the run says
//     so.
//   - A git status that times out with no such file found is tried again
//     at the next scan; a second failure in a row, or a git that fails
//     rather than hangs, stops git for the rest of the run, said once.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// gitTimeoutEnv overrides gitTimeout (a Go duration above 0); tests
// shorten it.
const gitTimeoutEnv = "CLAUDE_ITERATE_GIT_TIMEOUT"

// gitTimeout bounds one git command.
var gitTimeout = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(gitTimeoutEnv)); err == nil && d > 0 {
		return d
	}
	return 30 * time.Second
}()

// stallWalkCap bounds the walk for the file git hangs on: a tree larger
// than this is not walked whole (git's own scan did not end anyway).
const stallWalkCap = 500_000

// gitStallError is a git command that did not answer in time; path is the
// file it likely waits on ("" when none was found).
type gitStallError struct {
	what string // "git status"
	path string
	why  string // the sentence naming path, its kind and the fix
}

func (e *gitStallError) Error() string {
	msg := fmt.Sprintf("%s did not answer within %s", e.what, gitTimeout)
	if e.why != "" {
		msg += ": " + e.why
	}
	return msg
}

// gitStalled is the error of a git command (what) run in dir that did not
// answer in time, naming the file it waits on when the work tree has one.
func gitStalled(what, dir string) error {
	e := &gitStallError{what: what}
	if top, _ := findDotGit(dir); top != "" {
		e.path, e.why = findStallFile(top)
	}
	return e
}

// hangsGit reports whether git would wait on (or read without end) a file
// of mode m, read as an exclude file.
func hangsGit(m fs.FileMode) bool {
	return m&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket) != 0
}

// stallText says that the .gitignore or .gitattributes at path, of kind,
// makes git wait, and how to fix it.
func stallText(path, kind string) string {
	return fmt.Sprintf("%s is %s, not a regular file: git reads it as a %s and would wait on it without end; remove it ('rm %s') or make it a regular file", path, kind, filepath.Base(path), shellQuote(path))
}

// findStallFile walks the work tree at top (not its .git, nor past
// stallWalkCap entries) for a .gitignore (git status reads them) or a
// .gitattributes (git add reads those of the paths it adds) git would wait
// on: its path and the sentence naming it; "" when there is none.
func findStallFile(top string) (path, why string) {
	n := 0
	errFound := errors.New("found")
	walkDir(top, func(p string, d fs.DirEntry, err error) error {
		if n++; n > stallWalkCap {
			return filepath.SkipAll
		}
		if err != nil || p == top {
			return nil
		}
		switch {
		case d.Name() == ".git":
			// The repository's own, or a nested checkout's (another
			// workspace's worktree, a submodule: .git is a file there),
			// whose files git status does not read: the rest of that
			// checkout is skipped too.
			if d.IsDir() || filepath.Dir(p) != top {
				return filepath.SkipDir
			}
		case (d.Name() == ".gitignore" || d.Name() == ".gitattributes") && hangsGit(d.Type()):
			fi, err := os.Lstat(p)
			if err == nil && hangsGit(fi.Mode()) {
				path, why = p, stallText(p, fileKind(fi))
				return errFound
			}
		}
		return nil
	})
	return path, why
}

// dropKilledLock removes the index.lock that a git command of a commit,
// killed at its time bound (err), left in gitDir: git removes it only when
// it ends by itself, and every later git add or commit there would fail
// on it ("remove the file manually"). Only a lock made since started is
// taken: the repository's lock (gitLocked) keeps the run's other gits
// out meanwhile, and the agent has ended.
func dropKilledLock(gitDir string, err error, started time.Time) {
	var st *gitStallError
	if gitDir == "" || !errors.As(err, &st) {
		return
	}
	lock := filepath.Join(gitDir, "index.lock")
	if fi, err := os.Lstat(lock); err == nil && fi.Mode().IsRegular() && !fi.ModTime().Before(started.Add(-time.Second)) {
		os.Remove(lock)
	}
}

// gitVerb is the git command args run ("status"), past the options
// before it (-c NAME=VALUE, --literal-pathspecs).
func gitVerb(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-c" || a == "-C":
			i++
		case !strings.HasPrefix(a, "-"):
			return a
		}
	}
	return ""
}
