package main

import "github.com/rogpeppe/go-internal/testscript"

func ptyCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){}
}
