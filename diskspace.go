//go:build linux || darwin

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

// freeInodes returns the files that may still be made on the filesystem of
// path; ok is false when it cannot tell, or has no fixed number of them.
func freeInodes(path string) (n int64, ok bool) {
	var st syscall.Statfs_t
	if syscall.Statfs(path, &st) != nil || st.Files == 0 {
		return 0, false
	}
	return int64(st.Ffree), true
}
