package main

// This file holds the parts of the one writer (safewrite.go) that the
// tool's own files need when the agent replaced them mid-run: what is
// there is named, and a file of the tool's is put back (by a rename: never
// written through a link, nor opened).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// notDirError is err, the failed open of the directory dir, naming what
// is there when it is no directory: "<dir> is not a directory (a named
// pipe)".
func notDirError(dir string, err error) error {
	err = unwrapPathError(err)
	if errors.Is(err, syscall.ENOTDIR) {
		if fi, lerr := os.Lstat(dir); lerr == nil && !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 {
			return fmt.Errorf("%s is not a directory (%s)", dir, fileKind(fi))
		}
	}
	return err
}

// writeFileReplacing is writeFileAtomicSync for a file of the tool's own
// that the agent may have replaced mid-run (the metadata, a registry
// entry): a symbolic link, a FIFO, a socket or a device at path is
// replaced by the new file (the rename replaces the name; nothing is
// written through a link, nor opened), not refused. It returns, as
// replaced, the refusal of what was there (nil: a regular file or none).
// A directory there is still refused (err).
func writeFileReplacing(path string, data []byte, perm os.FileMode, durable bool) (replaced, err error) {
	err = writeFileAtomicSync(path, data, perm, durable)
	if !errors.Is(err, errNotRegular) {
		return nil, err
	}
	refusal := err
	t, err := newTempFileOver(path, true)
	if err != nil {
		return nil, err
	}
	defer t.discard()
	if _, err := t.f.Write(data); err != nil {
		return nil, err
	}
	if err := t.f.Chmod(perm); err != nil {
		return nil, err
	}
	if durable {
		if err := t.f.Sync(); err != nil {
			return nil, err
		}
	}
	if err := t.commit(path); err != nil {
		return nil, refusal
	}
	return refusal, nil
}
