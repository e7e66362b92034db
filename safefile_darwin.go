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
