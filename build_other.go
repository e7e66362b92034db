//go:build !linux && !darwin

package main

// claude-iterate manages process groups, terminal modes and job control
// with Unix system calls; it supports Linux and macOS only. This undefined
// name makes a build for any other system fail with this message.
var _ = claude_iterate_supports_only_linux_and_macos
