package main

import (
	"strings"
	"testing"
)

// TestMostlyWaits pins which commands main gives one P: those that wait on
// an agent, a run or a log for as long as they run; the others keep every
// CPU and skip the resize at start.
func TestMostlyWaits(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"run", "w"}, true},
		{[]string{"run"}, true},
		{[]string{"watch"}, true},
		{[]string{"logs", "w", "-f"}, true},
		{[]string{"setup", "w"}, true},
		{[]string{"edit", "w"}, true},
		{[]string{"verify", "w"}, true},
		{[]string{"stop", "w"}, false},
		{[]string{"status"}, false},
		{[]string{"history", "w"}, false},
		{[]string{"list"}, false},
		{[]string{"--help"}, false},
		{[]string{"version"}, false},
		{[]string{"frobnicate"}, false},
		{nil, false},
	} {
		if got := mostlyWaits(tc.args); got != tc.want {
			t.Errorf("mostlyWaits(%q) = %v; want %v", tc.args, got, tc.want)
		}
	}
}

// TestConfigManual: config's manual is built when asked, and lists every
// key.
func TestConfigManual(t *testing.T) {
	c := lookupCommand("config")
	if c == nil {
		t.Fatal("no config command")
	}
	m := c.manual()
	for _, k := range configKeys {
		if !containsLine(m, k.name) {
			t.Errorf("config's manual does not list %s", k.name)
		}
	}
	if got := lookupCommand("stop").manual(); got != stopUsage {
		t.Errorf("stop's manual = %q; want stopUsage", got)
	}
}

// containsLine reports whether text has a line that is s, indented.
func containsLine(text, s string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == "  "+s {
			return true
		}
	}
	return false
}
