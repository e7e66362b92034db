package main

// This file is the one watch over the files a run keeps open for writing:
// its log, its events file, its history and its .lock. The agent writes
// the workspace, and may remove or replace any of them mid-run (rm, a link
// in its place, another file, the directory it is in moved or replaced by
// a link); the writes to the descriptor the run holds would then go on
// into a file nobody reads, or the next ones through the link. The rules:
//
//   - Before it writes, the run asks whether the path still names the file
//     it holds (heldAt: the same device and inode as lstat sees the path,
//     so that a link in its place, or a directory on the way replaced, is
//     a change).
//   - Only in the state directory the run found (heldPath.moved): a
//     workspace replaced whole (by a copy, another run's) or deleted is
//     the run's to report (workspaceGone), once, and nothing of the run is
//     written into the new one meanwhile.
//   - A file changed is created anew, exclusively, through the one writer
//     (createHeld: never through a link, never into a file the run did not
//     make, such as one the agent put there; a directory on the way leading
//     out of the workspace is refused), and the run says so once, in one form (replacedMsg):
//     "<path> was removed or replaced during the run: <what now>" — the
//     next writes go to a new file, or, when it cannot be opened anew, the
//     file is no longer written (the .lock: the run still holds the
//     workspace by the lock of its directory).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// heldAt reports whether path still names the file f holds open. A
// descriptor that cannot be stat'ed is taken as held: the write says what
// is wrong.
func heldAt(f *os.File, path string) bool {
	fi, err := f.Stat()
	if err != nil {
		return true
	}
	lfi, err := os.Lstat(path)
	return err == nil && os.SameFile(fi, lfi)
}

// heldPath is where a file the run holds lives: its path, and the state
// directory of its workspace as the run found it.
type heldPath struct {
	path string
	dir  string
	was  os.FileInfo // dir when the file was opened; nil: unknown
}

// newHeldPath is path, a file in (or below) the state directory dir.
func newHeldPath(path, dir string) heldPath {
	fi, _ := os.Stat(dir)
	return heldPath{path: path, dir: dir, was: fi}
}

// moved reports whether the file f holds was removed or replaced at h's
// path while the state directory is still the one the run found.
func (h heldPath) moved(f *os.File) bool {
	if heldAt(f, h.path) {
		return false
	}
	fi, err := os.Stat(h.dir)
	return err == nil && h.was != nil && os.SameFile(fi, h.was)
}

// reopenHeld opens anew, with open, the file at path that was removed or
// replaced. It returns the new file (nil if none) and the warning to say
// ("" when the file's directory is gone): next says where the next writes
// go, lost what is lost when the file cannot be opened anew.
func reopenHeld(path string, open func() (*os.File, error), next, lost string) (*os.File, string) {
	f, err := open()
	switch {
	case err == nil:
		return f, replacedMsg(path, next)
	case errors.Is(err, fs.ErrNotExist):
		return nil, ""
	}
	return nil, replacedMsg(path, fmt.Sprintf("%v; %s", unwrapPathError(err), lost))
}

// errNotRuns is why a file the run holds is not opened anew: another
// regular file is at its path now, which the run did not make (the
// agent's: a run never appends to it).
var errNotRuns = errors.New("another file is in its place (not the run's)")

// createHeld creates anew, exclusively, the file at path that the run held
// and that was removed or replaced (heldfile.go): a name taken is refused
// with what is there (a link, a FIFO, a directory, or another regular
// file: errNotRuns), and nothing is written to it.
func createHeld(path string) (*os.File, error) {
	f, err := createFile(path, 0o600)
	if err == nil || !errors.Is(err, fs.ErrExist) {
		return f, err
	}
	fi, lerr := os.Lstat(path)
	switch {
	case lerr != nil:
		return nil, err
	case fi.Mode().IsRegular():
		return nil, &fs.PathError{Op: "create", Path: path, Err: errNotRuns}
	}
	return nil, &fs.PathError{Op: "create", Path: path, Err: notRegularAt(path, fi)}
}

// replacedMsg is the warning for a file the run holds that was removed or
// replaced: what now.
func replacedMsg(path, what string) string {
	return fmt.Sprintf("%s was removed or replaced during the run: %s", path, what)
}
