//go:build !race

package main

// raceBuild: the tests run with the race detector.
const raceBuild = false
