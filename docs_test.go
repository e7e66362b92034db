package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestDocsAgreeOnSignals checks that the README and every manual that
// lists the exit statuses name every signal that ends a run, with its exit
// code (issue 19: they disagreed on 131 and on the list of signals).
func TestDocsAgreeOnSignals(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var main strings.Builder
	printMainUsage(&main)
	docs := map[string]string{
		"README.md":  section(string(readme), "### Exit status", "\n### "),
		"help":       section(main.String(), "Exit status:", "Examples:"),
		"help run":   section(runUsage, "Exit status:", "Examples:"),
		"help watch": section(watchUsage, "Exit status:", "Examples:"),
	}
	for name, text := range map[string]string{"README.md": string(readme), "help": main.String(), "help run": runUsage} {
		if !strings.Contains(text, `Ctrl+\`) {
			t.Errorf("%s does not say what Ctrl+\\ does", name)
		}
	}
	for name, text := range docs {
		if text == "" {
			t.Errorf("%s has no exit status section", name)
		}
		for _, sig := range endingSignals {
			s := sig.(syscall.Signal)
			if !strings.Contains(text, signalName(s)) {
				t.Errorf("%s does not name %s", name, signalName(s))
			}
			if code := fmt.Sprint(128 + int(s)); !strings.Contains(text, code) {
				t.Errorf("%s does not give exit %s (%s)", name, code, signalName(s))
			}
		}
	}
}

// section returns the part of text from start up to end, or "".
func section(text, start, end string) string {
	_, after, ok := strings.Cut(text, start)
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, end)
	return before
}

// TestDocsExitStatus checks that every command's manual says its exit
// statuses, in a line of its own that starts "Exit status" (audit 8: 21 of
// 24 said none, and a script could not tell list's 1 from an error).
func TestDocsExitStatus(t *testing.T) {
	for _, c := range commandTable() {
		m := c.manual()
		if !strings.HasPrefix(m, "Exit status") && !strings.Contains(m, "\nExit status") {
			t.Errorf("%s --help says no exit status (want a line starting \"Exit status:\")", c.name)
		}
	}
}
