package main

// This file reads files the agent may have written: .status.json, TODO.md,
// the targets of file conditions, and, for list and status, a workspace's
// .metadata.json. The rules are: only a regular file is read (a symbolic
// link to one counts), never a FIFO, a device or a directory, which could
// block the tool beyond the reach of its signals or feed it without end;
// the file is opened without blocking and checked again once open (it may
// have been swapped); and at most a cap is read: a larger file is an error,
// which callers show as a warning.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// agentFileCap bounds what is read of a file the agent writes.
const agentFileCap = 1 << 20

// errNotRegular is a path that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openRegular opens path for reading without blocking, and makes sure it is
// a regular file.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, nil, &fs.PathError{Op: "read", Path: path, Err: notRegularError(fi)}
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

// notRegularError says what a path that is not a regular file is.
func notRegularError(fi fs.FileInfo) error {
	return fmt.Errorf("%w (%s)", errNotRegular, fileKind(fi))
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
func readRegularFile(path string, max int64) ([]byte, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLargeError(max)}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max { // it grew since the Stat
		return nil, &fs.PathError{Op: "read", Path: path, Err: tooLargeError(max)}
	}
	return data, nil
}

// tooLargeError says a file is over max bytes.
func tooLargeError(max int64) error {
	if max%(1<<20) == 0 {
		return fmt.Errorf("larger than %d MiB", max>>20)
	}
	return fmt.Errorf("larger than %d bytes", max)
}
