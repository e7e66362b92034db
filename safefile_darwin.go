//go:build darwin

package main

import (
	"syscall"
	"time"
)

// statModTime is the modification time fstat gave in st.
func statModTime(st *syscall.Stat_t) time.Time {
	return time.Unix(st.Mtimespec.Unix())
}

// seekData and seekHole are the whence of lseek for the next byte of data
// and the next hole (a run of NULs the file system does not store).
const seekHole, seekData = 3, 4 // SEEK_HOLE, SEEK_DATA
