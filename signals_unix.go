//go:build linux || darwin

package main

func exitBySignal(code int) {}
