package main

// This file is the one writer of files: every file the tool writes or
// creates is written here, as every file it reads is read in safefile.go
// (a test, TestOneWriter, fails when a file is written any other way). The
// agent writes the workspace, and may leave there, for the next run, a
// symbolic link, a FIFO or a directory where the tool writes. The rules:
//   - a symbolic link at the file's own name is never followed: the write
//     is refused (O_EXCL for a new file, a check before and after the
//     open of an existing one, a rename for a replaced one);
//   - a file inside a workspace is reached through the workspace's
//     directory opened as an os.Root: a directory on the way that is a
//     symbolic link leading out of the workspace is refused, whenever it
//     was put there;
//   - an open never blocks (O_NONBLOCK: a FIFO is refused, not waited on);
//     a regular file is put back in blocking mode once open; a directory
//     is opened as one (openRootDir: a FIFO in its place, the agent's, is
//     "not a directory", never opened);
//   - anything but a regular file is refused, in one line naming the path
//     and what is there (notRegularError);
//   - a file whose torn write would lose state is replaced whole: a
//     temporary file in the same directory, fsynced, renamed over it
//     (writeFileAtomic); a log is appended to (openFile with O_APPEND);
//   - a temporary file is named .<name>.<n>.claude-iterate-tmp and is
//     locked (flock) while it lives; the first write in a directory in a
//     process removes those that nobody holds: what a kill -9 left.
//
// What to call:
//   - writeFileAtomic(path, data, perm) (or writeFileAtomicSync) to
//     replace a whole file; writeFileReplacing for a file of the tool's
//     own that the agent may have replaced by a link or a FIFO, which it
//     replaces in turn (by a rename: never written through);
//   - createFile(path, perm) for a new file (a log, an unpacked file);
//   - openFile(path, flag, perm) for a file written in place (a history,
//     the lock); openEventsFile for --events, the one file the user names
//     (a link there is followed, a FIFO or a terminal taken);
//   - newTempFile(path) for a file written at length before it appears
//     under its name (an archive);
//   - makeDirAll(path, perm) for the directories on the way;
//   - confineWrites(dir) once a workspace's directory is known.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tempSuffix ends the name of every temporary file of the writer.
const tempSuffix = ".claude-iterate-tmp"

// writeRoots are the workspace directories this process writes in, and the
// directories whose stale temporary files it has removed.
var writeRoots struct {
	sync.Mutex
	dirs  []string
	swept map[string]bool
}

// confineWrites makes dir a workspace: a file written below it is reached
// without leaving it.
func confineWrites(dir string) {
	dir = filepath.Clean(dir)
	writeRoots.Lock()
	defer writeRoots.Unlock()
	for _, d := range writeRoots.dirs {
		if d == dir {
			return
		}
	}
	writeRoots.dirs = append(writeRoots.dirs, dir)
}

// confiningRoot returns the deepest workspace directory that holds path
// (path itself excluded), or "".
func confiningRoot(path string) string {
	writeRoots.Lock()
	defer writeRoots.Unlock()
	best := ""
	for _, d := range writeRoots.dirs {
		if len(d) > len(best) && path != d && within(d, path) {
			best = d
		}
	}
	return best
}

// writeDir is the directory a file is written in, opened so that nothing
// on the way leads out of the workspace.
type writeDir struct {
	root *os.Root
	dir  string // its path
	path string // the file's path
	name string // the file's name in it
}

// openWriteDir opens the directory of path.
func openWriteDir(path string) (*writeDir, error) {
	path = filepath.Clean(path)
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	if name == "" || name == "." || name == ".." {
		return nil, &fs.PathError{Op: "write", Path: path, Err: errors.New("not a file name")}
	}
	d := &writeDir{dir: dir, path: path, name: name}
	var err error
	if top := confiningRoot(path); top != "" && top != dir {
		d.root, err = openInside(top, dir)
	} else {
		d.root, err = openRootDir(dir)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "write", Path: path, Err: notDirError(dir, err)}
	}
	return d, nil
}

// openInside opens dir, a directory below the workspace directory top,
// without leaving top.
func openInside(top, dir string) (*os.Root, error) {
	t, err := openRootDir(top)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	rel, err := filepath.Rel(top, dir)
	if err != nil {
		return nil, err
	}
	r, err := openRootBelow(t, dir, rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if lerr := linkOut(top, rel); lerr != nil {
			return nil, lerr
		}
	}
	return r, err
}

// linkOut names the symbolic link on the way from top to top/rel that
// leads out of top, if there is one.
func linkOut(top, rel string) error {
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return nil
	}
	p := top
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, _ := os.Readlink(p)
		if real, err := filepath.EvalSymlinks(p); err != nil || !within(realTop, real) {
			return fmt.Errorf("%s is a symbolic link leading out of the workspace (to %s)", p, target)
		}
	}
	return nil
}

// close closes the directory.
func (d *writeDir) close() { d.root.Close() }

// refuseKind returns the error for a path that holds fi, a file other
// than a regular one.
func (d *writeDir) refuseKind(fi fs.FileInfo) error {
	return &fs.PathError{Op: "write", Path: d.path, Err: notRegularAt(d.path, fi)}
}

// checkKind refuses the name unless it is missing or a regular file.
func (d *writeDir) checkKind() error {
	fi, err := d.root.Lstat(d.name)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	return d.refuseKind(fi)
}

// openError turns a failed open of the name into the error shown: what is
// there when that is the cause (a directory, a link made meanwhile).
func (d *writeDir) openError(op string, err error) error {
	if fi, lerr := d.root.Lstat(d.name); lerr == nil && !fi.Mode().IsRegular() && !errors.Is(err, fs.ErrExist) {
		return d.refuseKind(fi)
	}
	return &fs.PathError{Op: op, Path: d.path, Err: unwrapPathError(err)}
}

// checkWritable refuses, before a command writes any of them, a path of
// paths the writer would refuse (a link, a FIFO or a directory in its
// place; a directory on the way leading out of the workspace): a command
// that writes several files checks them all first, so that a refusal
// leaves nothing half done. A path whose directory is missing yet is no
// refusal (it is made on the way).
func checkWritable(paths ...string) error {
	for _, p := range paths {
		d, err := openWriteDir(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		err = d.checkKind()
		d.close()
		if err != nil {
			return err
		}
	}
	return nil
}

// createFile creates path, a new regular file: an existing name, a
// symbolic link included, is an error (fs.ErrExist).
func createFile(path string, perm os.FileMode) (*os.File, error) {
	d, err := openWriteDir(path)
	if err != nil {
		return nil, err
	}
	defer d.close()
	f, err := d.root.OpenFile(d.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, d.openError("create", err)
	}
	return f, nil
}

// openFile opens the regular file path for writing, with flag (O_WRONLY
// or O_RDWR, and O_APPEND, O_CREATE, O_TRUNC as needed), perm for a new
// one.
func openFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	d, err := openWriteDir(path)
	if err != nil {
		return nil, err
	}
	defer d.close()
	if err := d.checkKind(); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(d.name, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, d.openError("open", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, d.refuseKind(fi)
	}
	// Between the check and the open the name may have become a link,
	// which the open followed (inside the directory): refused still.
	if lfi, err := d.root.Lstat(d.name); err != nil || !os.SameFile(fi, lfi) {
		f.Close()
		if err == nil {
			return nil, d.refuseKind(lfi)
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	// A second name (a hard link: an agent's ln ~/.bashrc history.jsonl)
	// may be a file anywhere on the device: refused, as a symbolic link is.
	if n := linkCount(fi); n > 1 {
		f.Close()
		return nil, &fs.PathError{Op: "write", Path: path, Err: fmt.Errorf("it has %d names (hard links), and another may be a file elsewhere: not written in place (to keep its content as this file alone: cp -p %s %s.new && mv %s.new %s)",
			n, shellQuote(path), shellQuote(path), shellQuote(path), shellQuote(path))}
	}
	setBlocking(f)
	return f, nil
}

// openEventsFile opens the --events file. Unlike the files the tool
// writes by convention, the user names it on the command line, as a
// shell's redirection names a file: a symbolic link is followed
// (--events /dev/stderr, a process substitution's /dev/fd/63), and a FIFO
// or a terminal is taken as well as a regular file. The open never blocks:
// a FIFO nobody reads fails with ENXIO (openEvents waits); a directory or
// any other kind is refused.
func openEventsFile(path string) (*os.File, error) {
	// Not emptied yet: the run empties it once it knows the file is none
	// of its workspace's (eventWriter.settle).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
			return nil, &fs.PathError{Op: "open", Path: path, Err: notRegularError(fi)}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		setBlocking(f)
	case m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0, m&fs.ModeSocket != 0:
	default:
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: notRegularError(fi)}
	}
	return f, nil
}

// setBlocking puts f back in blocking mode.
func setBlocking(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), false) })
	}
}

// writeFileAtomic writes data to path through a temporary file and a rename.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeFileAtomicSync(path, data, perm, true)
}

// writeFileAtomicSync is writeFileAtomic, with the fsync of the data before
// the rename only when durable is set. Without it a crash of the machine
// (not of the tool: the rename is atomic either way) may leave the previous
// version of the file, never a half-written one.
func writeFileAtomicSync(path string, data []byte, perm os.FileMode, durable bool) error {
	t, err := newTempFile(path)
	if err != nil {
		return err
	}
	defer t.discard()
	if _, err := t.f.Write(data); err != nil {
		return err
	}
	if err := t.f.Chmod(perm); err != nil {
		return err
	}
	if durable {
		if err := t.f.Sync(); err != nil {
			return err
		}
	}
	return t.commit(path)
}

// tempFile is a file written before it takes its name: it appears whole or
// not at all.
type tempFile struct {
	f    *os.File
	d    *writeDir
	name string // its name in d
	done bool
	// over: its commit replaces anything but a directory at its name
	// (writeFileReplacing).
	over bool
}

// newTempFile creates a temporary file in the directory of path, which
// must be missing or a regular file, and removes the stale ones there.
func newTempFile(path string) (*tempFile, error) {
	return newTempFileOver(path, false)
}

// newTempFileOver is newTempFile; with over, path may be anything but a
// directory, which the commit replaces.
func newTempFileOver(path string, over bool) (*tempFile, error) {
	d, err := openWriteDir(path)
	if err != nil {
		return nil, err
	}
	if fi, lerr := d.root.Lstat(d.name); over && lerr == nil && fi.IsDir() || !over {
		if err := d.checkKind(); err != nil {
			d.close()
			return nil, err
		}
	}
	d.sweep()
	for tries := 0; ; tries++ {
		name := "." + d.name + "." + strconv.FormatInt(time.Now().UnixNano()%1e9+int64(tries)*7919, 10) + tempSuffix
		f, err := d.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && tries < 100 {
			continue
		}
		if err != nil {
			d.close()
			return nil, d.openError("create", err)
		}
		// A sweep of another process holds it, or removed it before the
		// lock: it is not ours to write.
		if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) != nil || !d.holds(name, f) {
			f.Close()
			if tries < 100 {
				continue
			}
			d.close()
			return nil, &fs.PathError{Op: "create", Path: path, Err: errors.New("cannot keep a temporary file")}
		}
		return &tempFile{f: f, d: d, name: name, over: over}, nil
	}
}

// holds reports whether name in d is still the file f.
func (d *writeDir) holds(name string, f *os.File) bool {
	fi, err := f.Stat()
	lfi, lerr := d.root.Lstat(name)
	return err == nil && lerr == nil && os.SameFile(fi, lfi)
}

// Write writes to the temporary file.
func (t *tempFile) Write(p []byte) (int, error) { return t.f.Write(p) }

// commit gives the file the name of path (in the same directory),
// replacing a regular file there (anything else there is refused), then
// closes it. The file stays open, and so locked, until it has its name:
// closed before, another process's sweep would take it for a stale one
// and remove it under the rename (two runs starting at once lost a
// registry entry that way).
func (t *tempFile) commit(path string) error {
	name := filepath.Base(path)
	if fi, err := t.d.root.Lstat(name); err == nil && !fi.Mode().IsRegular() && (!t.over || fi.IsDir()) {
		return &fs.PathError{Op: "write", Path: path, Err: notRegularAt(path, fi)}
	}
	if err := t.d.root.Rename(t.name, name); err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: unwrapPathError(err)}
	}
	t.done = true
	err := t.f.Close()
	t.d.close()
	return err
}

// discard removes the temporary file unless it was committed.
func (t *tempFile) discard() {
	if t.done {
		return
	}
	t.done = true
	t.f.Close()
	t.d.root.Remove(t.name)
	t.d.close()
}

// sweep removes, once per directory and process, the temporary files of
// the writer that no process holds: left by a process killed while it
// wrote them.
func (d *writeDir) sweep() {
	writeRoots.Lock()
	if writeRoots.swept == nil {
		writeRoots.swept = map[string]bool{}
	}
	done := writeRoots.swept[d.dir]
	writeRoots.swept[d.dir] = true
	writeRoots.Unlock()
	if done {
		return
	}
	dir, err := d.root.Open(".")
	if err != nil {
		return
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	for _, name := range names {
		if isTempName(name) {
			d.removeStale(name)
		}
	}
}

// isTempName reports whether name is a temporary file's of the writer.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.HasSuffix(name, tempSuffix)
}

// removeStale removes the temporary file name unless a process holds it.
func (d *writeDir) removeStale(name string) {
	if fi, err := d.root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	// Held while the lock is: its writer cannot take it back meanwhile.
	if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) == nil && d.holds(name, f) {
		d.root.Remove(name)
	}
}

// renameNoFollow renames from to to, which must not be a symbolic link:
// replacing one would hide where it led. Within a workspace, both are
// reached without leaving it.
func renameNoFollow(from, to string) error {
	d, err := openWriteDir(to)
	if err != nil {
		return err
	}
	defer d.close()
	if fi, err := d.root.Lstat(d.name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return d.refuseKind(fi)
	}
	if filepath.Dir(filepath.Clean(from)) == d.dir {
		return d.root.Rename(filepath.Base(from), d.name)
	}
	return os.Rename(from, to)
}

// makeDirAll makes the directory path and those missing above it; below a
// workspace's directory, without leaving it.
func makeDirAll(path string, perm os.FileMode) error {
	path = filepath.Clean(path)
	err := mkdirAll(path, perm)
	if err == nil {
		return nil
	}
	// "file exists" names no cause: what is there does.
	if fi, lerr := os.Lstat(path); lerr == nil && !fi.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: path, Err: fmt.Errorf("not a directory (%s)", fileKind(fi))}
	}
	return err
}

// mkdirAll is makeDirAll before its error is told.
func mkdirAll(path string, perm os.FileMode) error {
	top := confiningRoot(path)
	if top == "" {
		return os.MkdirAll(path, perm)
	}
	t, err := openRootDir(top)
	if err != nil {
		return err
	}
	defer t.Close()
	rel, err := filepath.Rel(top, path)
	if err != nil {
		return err
	}
	if err := t.MkdirAll(rel, perm); err != nil {
		if lerr := linkOut(top, rel); lerr != nil {
			return &fs.PathError{Op: "mkdir", Path: path, Err: lerr}
		}
		return &fs.PathError{Op: "mkdir", Path: path, Err: unwrapPathError(err)}
	}
	return nil
}

// createFileAtomic makes path with data, whole or not at all, and never
// over a file there: one made meanwhile fails it with fs.ErrExist. The
// temporary file is linked into place, not renamed over it (on a file
// system without links: renamed, once path is seen missing).
func createFileAtomic(path string, data []byte, perm os.FileMode) error {
	t, err := newTempFile(path)
	if err != nil {
		return err
	}
	defer t.discard() // the temporary name goes; the link stays
	if _, err := t.f.Write(data); err != nil {
		return err
	}
	if err := t.f.Chmod(perm); err != nil {
		return err
	}
	if err := t.f.Sync(); err != nil {
		return err
	}
	err = t.d.root.Link(t.name, t.d.name)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	if _, lerr := t.d.root.Lstat(t.d.name); lerr == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	return t.commit(path)
}

// openNoFollow opens path read-only with flags, without following a link
// at its last component and without blocking. A link is named as such.
func openNoFollow(path string, flags int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC|flags, perm)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err == nil {
			return fd, nil
		}
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return -1, &fs.PathError{Op: "open", Path: path, Err: notRegularAt(path, fi)}
		}
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
}
