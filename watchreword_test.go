package main

import "testing"

// TestWatchReword: watch says its own stop command in place of the run's s
// key, for a run started in the foreground or in the background.
func TestWatchReword(t *testing.T) {
	v := &watcher{stopCmd: "claude-iterate stop w", cancelCmd: "claude-iterate stop w --cancel"}
	want := "Running w (loop mode, up to 3 iterations); claude-iterate stop w to stop after the current iteration"
	for _, hint := range []string{runKeysHint, runKeysHintBg} {
		if got := v.reword("Running w (loop mode, up to 3 iterations)" + hint); got != want {
			t.Errorf("reword(…%q) = %q, want %q", hint, got, want)
		}
	}
	if got := v.reword("Iteration 1"); got != "Iteration 1" {
		t.Errorf("reword changed an unrelated line: %q", got)
	}
}
