package main

// This file implements the lock of a read-modify-write: a command that reads
// a file shared with other processes (the project or user config,
// ANSWERS.md), changes it and writes it back holds an exclusive flock for
// the whole update, so that two at once both land instead of one losing the
// other's change. The rules are: the lock is on the file itself, opened
// without following a link and without blocking (a FIFO put there must not
// hang the tool), and only a regular file is locked; the writer replaces
// the file by a rename, so a lock taken on a file that was replaced
// meanwhile is let go and taken again on the file now in place, and the
// replacement must be the update's last write (a command that comes after
// it locks the new file at once); a file that does not exist yet is made
// only where none was made meanwhile (createFileAtomic), or made empty to
// be locked where an empty file means what a missing one does (lockMaking).
// A workspace's metadata is guarded by the workspace's claim instead
// (claimWorkspace), which also keeps runs out.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// lockForUpdate takes the update lock of path, waiting for another holder to
// finish; the returned function lets it go. A missing file is not locked
// (missing): its maker writes it with createFileAtomic, which fails if
// another made it meanwhile, and then updates that one, under its lock.
// (Its directory could not stand for it: a run holds a workspace's state
// directory locked, and a project root may be one.)
func lockForUpdate(path string) (unlock func(), missing bool, err error) {
	return lockUpdate(path, 0, false, -1, nil)
}

// lockMaking is lockForUpdate for a file that may be made empty (mode perm)
// when it is missing, to be locked: a file that only grows (ANSWERS.md).
func lockMaking(path string, perm uint32) (unlock func(), err error) {
	unlock, _, err = lockUpdate(path, perm, true, -1, nil)
	return unlock, err
}

// errLockBusy is a lock another process held for longer than the wait.
var errLockBusy = errors.New("held by another process")

// lockMakingWithin is lockMaking for a run, which must not wait for good
// on a lock that any process (the agent's, say) can hold: it calls busy
// once if the lock is held, and past wait gives up with errLockBusy.
func lockMakingWithin(path string, perm uint32, wait time.Duration, busy func()) (unlock func(), err error) {
	unlock, _, err = lockUpdate(path, perm, true, wait, busy)
	return unlock, err
}

// lockBusyPoll is how often a bounded wait for a lock tries again.
const lockBusyPoll = 20 * time.Millisecond

// lockUpdate is lockForUpdate, making a missing file when create is set;
// it waits for the lock for good when wait < 0, else at most wait, polling
// (busy, if not nil, is called once when the lock is found held).
func lockUpdate(path string, perm uint32, create bool, wait time.Duration, busy func()) (unlock func(), missing bool, err error) {
	deadline := time.Now().Add(wait)
	for {
		fd, err := openLockTarget(path, perm, create)
		if errors.Is(err, fs.ErrNotExist) {
			return func() {}, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		how := syscall.LOCK_EX
		if wait >= 0 {
			how |= syscall.LOCK_NB
		}
		for {
			err = flockFD(fd, how)
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				break
			}
			if time.Now().After(deadline) {
				err = errLockBusy
				break
			}
			if busy != nil {
				busy()
				busy = nil
			}
			time.Sleep(lockBusyPoll)
		}
		if err != nil {
			syscall.Close(fd)
			return nil, false, &fs.PathError{Op: "lock", Path: path, Err: err}
		}
		if lockStillHolds(fd, path) {
			return func() { syscall.Close(fd) }, false, nil
		}
		syscall.Close(fd) // replaced or removed while we waited
	}
}

// lockStillHolds reports whether the lock taken on fd still guards path: fd
// is the file now at path.
func lockStillHolds(fd int, path string) bool {
	var at, held syscall.Stat_t
	return syscall.Lstat(path, &at) == nil && syscall.Fstat(fd, &held) == nil && at.Dev == held.Dev && at.Ino == held.Ino
}

// flockFD applies an advisory lock operation to fd, again when a signal
// interrupts the wait.
func flockFD(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// lockedUpdateError names the file whose update lock could not be taken.
func lockedUpdateError(shown string, err error) error {
	return fmt.Errorf("cannot update %s: %w", shown, unwrapPathError(err))
}

// openLockTarget opens path to lock it: never through a symbolic link,
// without blocking, and only a regular file; made empty with perm if
// missing when create is set.
func openLockTarget(path string, perm uint32, create bool) (int, error) {
	flags := 0
	if create {
		flags = syscall.O_CREAT
	}
	fd, err := openNoFollow(path, flags, perm)
	if err != nil {
		return -1, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		fi, lerr := os.Lstat(path)
		if lerr != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: errNotRegular}
		}
		return -1, &fs.PathError{Op: "open", Path: path, Err: notRegularAt(path, fi)}
	}
	return fd, nil
}
