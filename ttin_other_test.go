//go:build !linux

package main

import (
	"errors"
	"os"
)

// inputWaiting is Linux's only (TIOCINQ); the tests that use it skip
// elsewhere.
func inputWaiting(f *os.File) (int, error) {
	return 0, errors.New("not on this system")
}
