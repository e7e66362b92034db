//go:build linux

package main

import (
	"syscall"
	"time"
)

// statModTime is the modification time fstat gave in st.
func statModTime(st *syscall.Stat_t) time.Time {
	return time.Unix(st.Mtim.Unix())
}

// seekData and seekHole are the whence of lseek for the next byte of data
// and the next hole (a run of NULs the file system does not store).
const seekData, seekHole = 3, 4 // SEEK_DATA, SEEK_HOLE
