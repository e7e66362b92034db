package main

import (
	"errors"
	"fmt"
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

// TestRunFlagRefusals pins parseRunFlags' usage errors for the flags that
// share a check (flags.go: notBlank, notZero; negatable), and which one is
// told when two are wrong: the order of the checks.
func TestRunFlagRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"w", "--test-cmd", " "}, `invalid value " " for flag --test-cmd: empty`},
		{[]string{"w", "--conditions", ""}, `invalid value "" for flag --conditions: empty`},
		{[]string{"w", "--events", "\t"}, `invalid value "\t" for flag --events: empty`},
		{[]string{"w", "--branch", ""}, `invalid value "" for flag --branch: empty`},
		{[]string{"w", "--base", " "}, `invalid value " " for flag --base: empty`},
		{[]string{"w", "--max-failures", "0"}, `invalid value "0" for flag --max-failures: must be at least 1`},
		{[]string{"w", "--max-test-failures", "0"}, `invalid value "0" for flag --max-test-failures: must be at least 1`},
		{[]string{"w", "--max-turns", "0"}, `invalid value "0" for flag --max-turns: must be at least 1`},
		{[]string{"w", "--model", ""}, `invalid value "" for flag --model: empty`},
		{[]string{"w", "--commit", "--no-commit=false"}, `--commit and --no-commit contradict each other`},
		{[]string{"w", "--worktree=false", "--no-worktree"}, `--worktree and --no-worktree contradict each other`},
		// Two wrong: the first check's error.
		{[]string{"w", "--base", "", "--test-cmd", ""}, `invalid value "" for flag --test-cmd: empty`},
		{[]string{"w", "--branch", "", "--commit", "--no-commit"}, `--commit and --no-commit contradict each other`},
		{[]string{"w", "--max-failures", "0", "--branch", ""}, `invalid value "" for flag --branch: empty`},
		{[]string{"w", "--max-failures", "0", "--max-test-failures", "0"}, `invalid value "0" for flag --max-test-failures: must be at least 1`},
	} {
		_, _, err := parseRunFlags(tc.args)
		if err == nil || err.Error() != tc.want {
			t.Errorf("run %q: error %v, want %s", tc.args, err, tc.want)
		}
	}
}

// TestRunNegatableFlagSettings pins the config values the bool flags with
// a --no- form set: the flag says its value, its --no- form the opposite.
func TestRunNegatableFlagSettings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want map[string]any
	}{
		{[]string{"w"}, map[string]any{}},
		{[]string{"w", "--worktree"}, map[string]any{"git.worktree": true}},
		{[]string{"w", "--worktree=false"}, map[string]any{"git.worktree": false}},
		{[]string{"w", "--no-worktree"}, map[string]any{"git.worktree": false}},
		{[]string{"w", "--no-worktree=false"}, map[string]any{"git.worktree": true}},
		{[]string{"w", "--commit"}, map[string]any{"git.commit": true}},
		{[]string{"w", "--no-commit"}, map[string]any{"git.commit": false}},
		{[]string{"w", "--no-commit", "--worktree"}, map[string]any{"git.commit": false, "git.worktree": true}},
	} {
		o, _, err := parseRunFlags(tc.args)
		if err != nil {
			t.Fatalf("run %q: %v", tc.args, err)
		}
		got := map[string]any{}
		for k, v := range o.flagSettings().values {
			if strings.HasPrefix(k, "git.") {
				got[k] = v
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("run %q: git settings %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestModeFlagRefused pins init's and setup's refusal of a --mode that
// names no mode, and that of a missing workspace, told before anything
// is read.
func TestModeFlagRefused(t *testing.T) {
	for _, tc := range []struct {
		run  func(*cliEnv, []string) error
		args []string
		want string
	}{
		{runInit, []string{"w", "--mode", "spiral"}, `invalid value "spiral" for flag --mode: want loop or iterative`},
		{runSetup, []string{"w", "--mode", "Loop"}, `invalid value "Loop" for flag --mode: want loop or iterative`},
		{runInit, []string{"--mode", "iterative"}, `missing workspace name`},
		{runSetup, []string{"--mode", "loop"}, `missing workspace name`},
		{runEdit, nil, `missing workspace`},
		{runMerge, []string{"--squash"}, `missing workspace`},
		{runPR, nil, `missing workspace`},
		{runClean, []string{"-f"}, `missing workspace`},
	} {
		err := tc.run(&cliEnv{}, tc.args)
		var ue *usageError
		if !errors.As(err, &ue) || err.Error() != tc.want {
			t.Errorf("%q: error %v, want the usage error %s", tc.args, err, tc.want)
		}
	}
}
