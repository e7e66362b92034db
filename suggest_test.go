package main

import (
	"encoding/json"
	"testing"
)

func TestClosestName(t *testing.T) {
	commands := []string{"init", "setup", "edit", "run", "stop", "watch", "list", "status", "logs", "history", "reset", "clean", "archive", "template", "config", "completion", "version", "help"}
	for _, tc := range []struct{ typed, want string }{
		{"rn", "run"},
		{"runn", "run"},
		{"stat", "status"},
		{"lst", "list"},
		{"archve", "archive"},
		{"tempalte", "template"},
		{"sotp", "stop"}, // two letters swapped: one edit, as a typo is
		{"hlep", "help"}, // (a short word's limit is one edit)
		{"tsatus", "status"},
		{"frobnicate", ""},
		{"x", ""},
		{"", ""},
		{"s", ""},
		{"R", ""},             // one letter: only the same letter in another case
		{"max-iteration", ""}, // not a command
	} {
		if got := closestName(tc.typed, commands); got != tc.want {
			t.Errorf("closestName(%q) = %q; want %q", tc.typed, got, tc.want)
		}
	}
	workspaces := []string{"demo", "w1", "api-migration"}
	for _, tc := range []struct{ typed, want string }{
		{"dmeo", "demo"},
		{"edmo", "demo"},
		{"1w", "w1"},
		{"api-migartion", "api-migration"},
		{"w2", "w1"},
		{"mode", ""}, // two swaps away
	} {
		if got := closestName(tc.typed, workspaces); got != tc.want {
			t.Errorf("closestName(%q) = %q; want %q", tc.typed, got, tc.want)
		}
	}
	flags := []string{"max-iterations", "max-duration", "max-cost", "m", "verbose", "v", "dry-run", "quiet", "q"}
	for _, tc := range []struct{ typed, want string }{
		{"max-iteration", "max-iterations"},
		{"max-iterationss", "max-iterations"},
		{"verbos", "verbose"},
		{"dry", "dry-run"},
		{"dyr-run", "dry-run"},
		{"max", ""}, // three flags start so: none is meant more than another
		{"zzz", ""},
	} {
		if got := closestName(tc.typed, flags); got != tc.want {
			t.Errorf("closestName(%q) = %q; want %q", tc.typed, got, tc.want)
		}
	}
}

func TestRemoveConfigKey(t *testing.T) {
	for _, tc := range []struct {
		in, key, want string
		found         bool
	}{
		{`{"defaultDelay":1,"outputLevel":"quiet"}`, "defaultDelay", `{"outputLevel":"quiet"}`, true},
		{`{"claude":{"args":["-x"],"command":"c"}}`, "claude.args", `{"claude":{"command":"c"}}`, true},
		{`{"claude":{"args":["-x"]},"claude.args":["-y"]}`, "claude.args", `{}`, true},
		{`{"notification":{"statusWatch":{"enabled":true}}}`, "notification.statusWatch.enabled", `{}`, true},
		{`{"notification.statusWatch":{"enabled":true}}`, "notification.statusWatch.enabled", `{}`, true},
		{`{"defaultDelay":1}`, "claude.args", `{"defaultDelay":1}`, false},
	} {
		obj := map[string]any{}
		if err := json.Unmarshal([]byte(tc.in), &obj); err != nil {
			t.Fatal(err)
		}
		found := removeConfigKey(obj, tc.key)
		got, _ := json.Marshal(obj)
		if string(got) != tc.want || found != tc.found {
			t.Errorf("removeConfigKey(%s, %s) = %s, %v; want %s, %v", tc.in, tc.key, got, found, tc.want, tc.found)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"demo", "demo", 0},
		{"demo", "dmeo", 1}, // a swap is one edit
		{"ab", "ba", 1},
		{"1w", "w1", 1},
		{"demo", "mode", 4},
		{"kitten", "sitting", 3},
		{"ca", "abc", 3}, // each substring is edited once at most
		{"max-iteration", "max-iterations", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d; want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
