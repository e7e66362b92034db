package main

// This file implements the mock agent of --dry-run: the binary re-executed
// as the agent. It speaks the real CLI's stream-json — init, assistant text,
// tool calls and results, a result with a cost — at a human pace, advances
// .status.json by one item per iteration until the task is complete, and
// answers SIGINT and SIGTERM as the real CLI does. The run around it is the
// real one: process management, signals, display, logs.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// mockAgentCommand is the hidden subcommand that runs the mock agent.
const mockAgentCommand = "__mock-agent"

// Environment of the mock agent, set by the run.
const (
	mockEnvStatus = "CLAUDE_ITERATE_MOCK_STATUS"
	mockEnvTotal  = "CLAUDE_ITERATE_MOCK_TOTAL"
	mockEnvPace   = "CLAUDE_ITERATE_MOCK_PACE"
)

func runMockAgent(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	prompt, _ := io.ReadAll(stdin)
	statusPath := os.Getenv(mockEnvStatus)
	total, err := strconv.Atoi(os.Getenv(mockEnvTotal))
	if err != nil || total <= 0 {
		total = 3
	}
	pace, err := time.ParseDuration(os.Getenv(mockEnvPace))
	if err != nil {
		pace = 150 * time.Millisecond
	}
	emit := func(v map[string]any) {
		b, _ := json.Marshal(v)
		stdout.Write(append(b, '\n'))
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	// interrupted waits one step of the agent's pace; on a signal it ends
	// the session as the real CLI does — an error_during_execution result,
	// then exit 0 after SIGINT, 143 after SIGTERM — and returns that code.
	interrupted := func() (int, bool) {
		select {
		case sig := <-sigs:
			emit(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "num_turns": 1, "total_cost_usd": 0.001})
			if sig == syscall.SIGTERM {
				return 143, true
			}
			return 0, true
		case <-time.After(pace):
			return 0, false
		}
	}

	done := 0
	if data, err := readRegularFile(statusPath, agentFileCap); err == nil {
		if ts, err := parseStatusJSON(data); err == nil && ts.HasProgress {
			done = ts.Completed
		}
	}
	next := min(done+1, total)
	session := fmt.Sprintf("mock-%d", os.Getpid())
	text := func(s string) map[string]any {
		return map[string]any{"type": "assistant", "session_id": session, "parent_tool_use_id": nil,
			"message": map[string]any{"role": "assistant", "model": "mock", "content": []any{map[string]any{"type": "text", "text": s}}}}
	}
	toolUse := func(id, name string, input map[string]any) map[string]any {
		return map[string]any{"type": "assistant", "session_id": session, "parent_tool_use_id": nil,
			"message": map[string]any{"role": "assistant", "model": "mock", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}}
	}
	toolResult := func(id, content string) map[string]any {
		return map[string]any{"type": "user", "session_id": session, "parent_tool_use_id": nil,
			"message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": false}}}}
	}

	if strings.Contains(string(prompt), `"verdict"`) { // the verifier's prompt
		return mockVerifier(emit, interrupted, text, toolUse, toolResult, statusPath, session)
	}
	events := []map[string]any{
		{"type": "system", "subtype": "init", "session_id": session, "model": "mock", "tools": []string{"Read", "Edit", "Bash"}, "cwd": "."},
		text(fmt.Sprintf("Working on item %d of %d (prompt: %d bytes).", next, total, len(prompt))),
		toolUse("toolu_read", "Read", map[string]any{"file_path": statusPath}),
		toolResult("toolu_read", fmt.Sprintf("{\"progress\": {\"completed\": %d, \"total\": %d}}", done, total)),
		toolUse("toolu_bash", "Bash", map[string]any{"command": fmt.Sprintf("echo item %d done", next)}),
		toolResult("toolu_bash", fmt.Sprintf("item %d done", next)),
	}
	for _, e := range events {
		emit(e)
		if code, stop := interrupted(); stop {
			return code
		}
	}

	complete := next >= total
	status := map[string]any{"complete": complete, "worked": true,
		"progress":    map[string]any{"completed": next, "total": total},
		"summary":     fmt.Sprintf("mock agent finished item %d of %d", next, total),
		"lastUpdated": time.Now().UTC().Format(time.RFC3339)}
	if statusPath != "" {
		if err := writeJSONAtomic(statusPath, status); err != nil {
			fmt.Fprintf(stderr, "mock agent: %v\n", err)
		}
	}
	result := fmt.Sprintf("Finished item %d of %d.", next, total)
	if complete {
		result += " All items are done. <promise>COMPLETE</promise>"
	}
	emit(text(result))
	emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": result,
		"num_turns": 3, "total_cost_usd": 0.0123, "duration_ms": 6 * pace.Milliseconds(), "session_id": session})
	return 0
}

// mockVerifier plays the verifier in a dry run: it reads the status and
// passes, at the mock agent's pace.
func mockVerifier(emit func(map[string]any), step func() (int, bool), text func(string) map[string]any,
	toolUse func(id, name string, input map[string]any) map[string]any, toolResult func(id, content string) map[string]any,
	statusPath, session string) int {
	result := "The mock verifier read the status: every item is done.\n" +
		`{"verdict": "pass", "summary": "Every item is done (mock verifier).", "issues": [], "confidence": "low"}`
	for _, e := range []map[string]any{
		{"type": "system", "subtype": "init", "session_id": session, "model": "mock", "tools": []string{"Read", "Bash"}, "cwd": "."},
		toolUse("toolu_read", "Read", map[string]any{"file_path": statusPath}),
		toolResult("toolu_read", "{\"complete\": true}"),
		text(result),
	} {
		emit(e)
		if code, stop := step(); stop {
			return code
		}
	}
	emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": result,
		"num_turns": 2, "total_cost_usd": 0.0045, "session_id": session})
	return 0
}
