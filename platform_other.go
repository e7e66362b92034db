//go:build !linux && !darwin

package main

// platformSupported reports whether the tool runs here: process groups,
// terminal modes and job control are implemented for Linux and macOS only.
const platformSupported = false

func exitBySignal(code int) {}
