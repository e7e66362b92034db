//go:build linux || darwin

package main

// platformSupported reports whether the tool runs here.
const platformSupported = true
