package main

// This file is the one reader of files: every file the tool reads is read
// here (a test, TestOneReader, fails when a file is read any other way).
// Any of them may be hostile: the agent writes the workspace, and a user or
// a script may leave a FIFO, a link to /dev/zero or a 4 GiB sparse file
// where a config file belongs. The rules are: only a regular file is read
// (a symbolic link to one counts), never a FIFO, a device or a directory,
// which could block the tool beyond the reach of its signals or feed it
// without end, nor a dangling link (named as a link, not as a missing
// file); the file is opened without blocking (O_NONBLOCK) and checked
// again once open (it may have been swapped); and at most a cap per kind of
// file is read: a larger file is an error. Callers name the file and what
// is wrong in one line: an error (exit 1), or a warning where the run can
// go on.
//
// What to call:
//   - readRegularFile(path, cap) for a whole file, with one of the caps below;
//   - openRegular(path) to stream a regular file (archives);
//   - openOwnFile(path), readOwnFile(path, cap) for a file the tool writes
//     in a workspace and shows as it is or streams (its events, logs,
//     history, run state): a link there was not made by the tool (the one
//     writer never writes through one) and is refused, never followed;
//   - openLockFile(path) for a workspace's .lock (read and written);
//   - openDir(path) or readDir(path) to list a directory, walkDir(path,
//     fn) to walk a tree, openRootDir(path) and openRootBelow for a
//     directory the one writer writes in; readKernelFile(path, cap) for a
//     file of /proc, openTerminal(path) for /dev/tty.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The caps per kind of file: far above what a real file holds, far below
// what would hurt the tool's memory.
const (
	// agentFileCap bounds .status.json, TODO.md and the targets of file
	// conditions.
	agentFileCap = 1 << 20
	// taskFileCap bounds INSTRUCTIONS.md, prompt files and templates.
	taskFileCap = 4 << 20
	// configCap bounds the config files and a conditions file.
	configCap = 1 << 20
	// runStateCap bounds .run-state.json.
	runStateCap = 1 << 20
	// lockRecordCap bounds what is read of a .lock's record.
	lockRecordCap = 64 << 10
	// kernelFileCap bounds a /proc file (an environment is at most a few
	// MiB).
	kernelFileCap = 8 << 20
)

// errNotRegular is a path that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens path for reading without blocking, and makes sure it is
// a regular file.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	if err := statRegular(path); err != nil {
		return nil, nil, err
	}
	// O_NONBLOCK: a FIFO put in place since the Stat must not block the
	// open; it is refused below.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: notRegularError(fi)}
	}
	return f, fi, nil
}

// openOwnFile is openRegular for a file the tool itself writes in a
// workspace, where the agent may put a link in its place: a symbolic link
// at path is refused, not followed (what it leads to, a file of the user's,
// would be shown or streamed as the run's), as a FIFO or a directory is.
func openOwnFile(path string) (*os.File, fs.FileInfo, error) {
	if err := lstatRegular(path); err != nil {
		return nil, nil, err
	}
	fd, err := openNoFollow(path, 0, 0) // the one writer's; O_NONBLOCK
	if err != nil {
		return nil, nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() { // swapped since the Lstat
		f.Close()
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: notRegularError(fi)}
	}
	return f, fi, nil
}

// readOwnFile is readRegularFile for a file of openOwnFile's kind: a link
// at path is refused, not followed.
func readOwnFile(path string, max int64) ([]byte, error) {
	f, fi, err := openOwnFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLargeError(max)}
	}
	data, err := readStream(f, max)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: unwrapPathError(err)}
	}
	return data, nil
}

// lstatRegular is statRegular that does not follow a link at path: a link
// is refused, named with its target.
func lstatRegular(path string) error {
	if fi, err := os.Lstat(path); err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: unwrapPathError(err)}
	} else if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: path, Err: notRegularAt(path, fi)}
	}
	return nil
}

// notRegularError says what a path that is not a regular file is.
func notRegularError(fi fs.FileInfo) error {
	return fmt.Errorf("%w (%s)", errNotRegular, fileKind(fi))
}

// notRegularAt is notRegularError for the file at path, which names the
// target of a symbolic link: the file the user meant to be written.
func notRegularAt(path string, fi fs.FileInfo) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := os.Readlink(path); err == nil {
			return fmt.Errorf("%w (a symbolic link to %s)", errNotRegular, target)
		}
	}
	return notRegularError(fi)
}

// fileKind names the kind of file fi is: "a directory", "a named pipe", …
func fileKind(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// readRegularFile reads a regular file of at most max bytes.
//
// It is openRegular with plain system calls instead of an *os.File: a run
// reads a few of these files per iteration, and an *os.File adds the
// poller's registration (refused for regular files), a finalizer and a
// growing read buffer to each.
func readRegularFile(path string, max int64) ([]byte, error) {
	var st syscall.Stat_t
	return readRegularStat(path, max, &st)
}

// readRegularStat is readRegularFile that fills st with what fstat says of
// the descriptor it read.
func readRegularStat(path string, max int64, st *syscall.Stat_t) ([]byte, error) {
	if err := statRegular(path); err != nil {
		return nil, err
	}
	fd, err := openNonblock(path) // see openRegular
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if err := syscall.Fstat(fd, st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG { // swapped since the Stat
		err := errNotRegular
		if fi, serr := os.Stat("/dev/fd/" + strconv.Itoa(fd)); serr == nil {
			err = notRegularError(fi)
		}
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if st.Size > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLargeError(max)}
	}
	// +1: the read that finds it grew since.
	data, err := readFD(fd, path, make([]byte, 0, st.Size+1), max+1, st.Size)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLargeError(max)}
	}
	return data, nil
}

// statRegular refuses path, before any open, unless it is a regular file:
// a device is never opened, nor a FIFO waited on.
func statRegular(path string) error {
	if fi, err := os.Stat(path); err != nil {
		if li, lerr := os.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			// A dangling link (or a loop) is no missing file: it is
			// named as what it is, as a FIFO or a directory is.
			return &fs.PathError{Op: "read", Path: path, Err: notRegularAt(path, li)}
		}
		return &fs.PathError{Op: "open", Path: path, Err: unwrapPathError(err)} // as os.Open says it
	} else if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: path, Err: notRegularError(fi)}
	}
	return nil
}

// openNonblock opens path for reading, without blocking, as a plain
// descriptor.
func openNonblock(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// readFD appends to buf what fd holds, until its end or until buf holds
// limit bytes; on an error it returns what it read with the error. size is
// the file's size as fstat gave it (-1: unknown, as for /proc's files): a
// read that comes short with exactly size bytes read (after what buf held)
// reached the end, and no read is made to find it.
func readFD(fd int, path string, buf []byte, limit, size int64) ([]byte, error) {
	start := int64(len(buf))
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(limit, 2*int64(cap(buf))))-len(buf))
		}
		want := min(int64(cap(buf)), limit) - int64(len(buf))
		n, err := syscall.Read(fd, buf[len(buf):int64(len(buf))+want])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
		if int64(n) < want && int64(len(buf))-start == size {
			break
		}
	}
	return buf, nil
}

// errTooLarge is a file over the cap of its kind.
var errTooLarge = errors.New("larger than")

// tooLargeError says a file is over max bytes.
func tooLargeError(max int64) error {
	return fmt.Errorf("%w %s", errTooLarge, sizeText(max))
}

// sizeText says a cap in one style: MiB or KiB for a multiple of either,
// bytes otherwise.
func sizeText(n int64) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// fileFaultHint says what to do about a file the one reader refused (err,
// for the file at path, shown as shown), fitting why: what is there in
// place of a regular file is removed, a file over its cap made smaller.
// It is "" for any other error (a missing file: the caller knows what
// writes it).
func fileFaultHint(path, shown string, err error) string {
	switch {
	case errors.Is(err, errNotRegular):
		return "replace it with a regular file: " + removeCommand(path, shown) + " removes what is there"
	case errors.Is(err, errTooLarge):
		return "make it smaller, or move it away: mv " + shellQuote(shown) + " " + shellQuote(shown+".big")
	}
	return ""
}

// removeCommand is the shell command that removes what is at path, shown
// as shown: rm -r for a directory (rm alone refuses one), rm for any other
// kind (a link is removed, not what it points to).
func removeCommand(path, shown string) string {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return "rm -r " + shellQuote(shown)
	}
	return "rm " + shellQuote(shown)
}

// openLockFile opens (creating it if need be) a workspace's lock file for
// reading and writing, without blocking, and makes sure it is a regular
// file: a symbolic link, a FIFO or a device in its place is an error naming
// it.
func openLockFile(path string) (*os.File, error) {
	return openFile(path, os.O_RDWR|os.O_CREATE, 0o600) // the one writer's
}

// readAtMost reads at most max bytes of f from offset 0 (a lock record).
func readAtMost(f *os.File, max int64) []byte {
	buf := make([]byte, max)
	n, _ := f.ReadAt(buf, 0)
	return buf[:n]
}

// openDir opens a directory to list it.
func openDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}

// readKernelFile reads a file of /proc, at most max bytes. The kernel
// writes these files and reports a size of 0, so neither the kind nor the
// size is checked first; the read is still bounded.
//
// It reads with plain system calls, no *os.File: the run reads a /proc file
// for every agent it starts, and an *os.File would add the poller's
// registration (refused for these files) and a finalizer to each read.
func readKernelFile(path string, max int64) ([]byte, error) {
	fd, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	return readFD(fd, path, make([]byte, 0, min(max, 1024)), max, -1)
}

// openTerminal opens the terminal at path (/dev/tty) for reading and
// writing, and makes sure it is one.
func openTerminal(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if !isTerminal(f) {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("not a terminal")}
	}
	return f, nil
}

// readDir lists a directory sorted by name, as os.ReadDir does, but opens
// it with O_DIRECTORY: a FIFO in its place is an error, not a hang.
func readDir(path string) ([]os.DirEntry, error) {
	f, err := openDir(path)
	if err != nil {
		return nil, err
	}
	return listDir(f)
}

// listDir lists the directory f holds open, sorted by name, and closes it.
func listDir(f *os.File) ([]os.DirEntry, error) {
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// The directories the tool opens are opened as directories, never as
// files: os.OpenRoot, os.Root.OpenRoot, os.Open and so filepath.WalkDir
// open a path with neither O_DIRECTORY nor O_NONBLOCK, and a FIFO put in
// a directory's place (by the agent, mid-run) blocked that open for good,
// and the run with it (tryout6 #1). A FIFO, a device or a socket there is
// "not a directory", never opened; TestOneReader holds every other file
// of the tool to these.

// openRootDir opens the directory path as an os.Root (a symbolic link to
// a directory is followed, as os.OpenRoot does). The trailing slash makes
// the kernel resolve path as a directory: anything else is refused
// (ENOTDIR) in the same lookup, before any open, so that no swap can come
// between a check and the open.
func openRootDir(path string) (*os.Root, error) {
	r, err := os.OpenRoot(dirSlash(path))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: unwrapPathError(err)}
	}
	return r, nil
}

// dirSlash is path with one trailing separator.
func dirSlash(path string) string {
	path = filepath.Clean(path)
	if strings.HasSuffix(path, string(filepath.Separator)) {
		return path
	}
	return path + string(filepath.Separator)
}

// openRootBelow opens the directory t/rel (dir) as an os.Root, without
// blocking (openRootDir) and without leaving t: the directory opened must
// be the one t resolves rel to (a link inside t is followed, one leading
// out of it is refused), so that a swap between the two looks is caught.
func openRootBelow(t *os.Root, dir, rel string) (*os.Root, error) {
	r, err := openRootDir(dir)
	if err != nil {
		return nil, err
	}
	in, err := t.Stat(rel)
	if err == nil {
		var got fs.FileInfo
		if got, err = r.Stat("."); err == nil && !os.SameFile(in, got) {
			err = errors.New("replaced while it was opened")
		}
	}
	if err != nil {
		r.Close()
		return nil, &fs.PathError{Op: "open", Path: dir, Err: unwrapPathError(err)}
	}
	return r, nil
}

// globDir is filepath.Glob of the names in dir that match pattern (no
// separator in it), sorted; but dir is opened as a directory (readDir),
// never waited on. A dir that is none matches nothing.
func globDir(dir, pattern string) []string {
	entries, _ := readDir(dir)
	var out []string
	for _, e := range entries {
		if ok, _ := filepath.Match(pattern, e.Name()); ok {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// walkDir is filepath.WalkDir (the same order, fn and fs.SkipDir and
// fs.SkipAll), but it opens each directory with O_DIRECTORY, O_NONBLOCK
// and O_NOFOLLOW: an entry that became a FIFO (or a link) since it was
// listed as a directory is an error passed to fn, not a hang (nor a walk
// out of the tree).
func walkDir(root string, fn fs.WalkDirFunc) error {
	info, err := os.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = walkDirAt(root, fs.FileInfoToDirEntry(info), fn)
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

// walkDirAt walks path, whose entry is d, as filepath.WalkDir's walkDir.
func walkDirAt(path string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == fs.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	var entries []os.DirEntry
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err == nil {
		entries, err = listDir(f)
	}
	if err != nil {
		if err = fn(path, d, err); err != nil {
			if err == fs.SkipDir {
				err = nil
			}
			return err
		}
	}
	for _, e := range entries {
		if err := walkDirAt(filepath.Join(path, e.Name()), e, fn); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// readStream reads r to its end, at most max bytes: more is an error.
func readStream(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && int64(len(data)) > max {
		err = tooLargeError(max)
	}
	return data, err
}

// readRegularFileInfo is readRegularFile that also returns what fstat says
// of the descriptor read (identity, size, modification time), so that the
// two describe the same file: the before-and-after look at .status.json
// (evidence.go). It is readRegularFile's path, system calls and all.
func readRegularFileInfo(path string, max int64) ([]byte, fs.FileInfo, error) {
	fi := &fdInfo{name: filepath.Base(path)}
	data, err := readRegularStat(path, max, &fi.st)
	if err != nil {
		return nil, nil, err
	}
	return data, fi, nil
}

// fdInfo is what fstat said of a regular file read, as an fs.FileInfo; Sys
// is the *syscall.Stat_t, as os.Stat's is.
type fdInfo struct {
	name string
	st   syscall.Stat_t
}

func (i *fdInfo) Name() string       { return i.name }
func (i *fdInfo) Size() int64        { return i.st.Size }
func (i *fdInfo) Mode() fs.FileMode  { return fs.FileMode(i.st.Mode & 0o777) } // a regular file
func (i *fdInfo) ModTime() time.Time { return statModTime(&i.st) }
func (i *fdInfo) IsDir() bool        { return false }
func (i *fdInfo) Sys() any           { return &i.st }

// readFault words the one reader's refusal (err) of the file at path,
// shown as shown, which what names ("prompt file"; "" when the path says
// enough), one way for every file: "<what> <shown> does not exist", still
// errors.Is(err, fs.ErrNotExist); any other refusal, a dangling link among
// them ("not a regular file (a symbolic link to <target>)"), "reading
// <what> <shown>: <why>", with fileFaultHint's hint when fix is set (a file the
// tool keeps, not one named on the command line: a pipe given there is
// meant, and is refused without a hint to remove it).
func readFault(what, path, shown string, err error, fix bool) error {
	name := strings.TrimSpace(what + " " + shown)
	if errors.Is(err, fs.ErrNotExist) {
		return &missingFileError{name + " does not exist"}
	}
	err = fmt.Errorf("reading %s: %w", name, unwrapPathError(err))
	if hint := fileFaultHint(path, shown, err); fix && hint != "" {
		return withHint(err, "%s", hint)
	}
	return err
}

// missingFileError is a missing file, worded by readFault.
type missingFileError struct{ msg string }

func (e *missingFileError) Error() string { return e.msg }
func (e *missingFileError) Unwrap() error { return fs.ErrNotExist }

// linkCount is how many names (hard links) the file fi has; 1 when the
// system does not say.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
