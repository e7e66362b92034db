//go:build darwin

package main

import "syscall"

// freeSpace returns the bytes an unprivileged process may still write on
// the filesystem of path.
func freeSpace(path string) (int64, bool) {
	var st syscall.Statfs_t
	if syscall.Statfs(path, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
