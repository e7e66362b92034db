package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRolloutOutputRefused reads the shell tools' output formats: a refusal
// is a failed command with the sandbox's words, or one that exited 0 with
// "Read-only file system".
func TestRolloutOutputRefused(t *testing.T) {
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	for _, c := range []struct {
		out  json.RawMessage
		want bool
	}{
		{str("Chunk ID: 1\nProcess exited with code 1\nOutput:\ntouch: cannot touch 'f': Read-only file system\n"), true},
		{str("Process exited with code 1\nOutput:\nno such file\n"), false},
		{str("Process exited with code 0\nOutput:\nbash: f: Read-only file system\nrc=1\n"), true},
		{str("Process exited with code 0\nOutput:\nPermission denied is a phrase\n"), false},
		{str("Exit code: 1\nWall time: 0.1 seconds\nOutput:\nmkdir: Operation not permitted\n"), true},
		{str(`{"output":"x: Read-only file system\n","metadata":{"exit_code":1,"duration_seconds":0.1}}`), true},
		{json.RawMessage(`{"content":"Process exited with code 2\nOutput:\nPermission denied\n","success":false}`), true},
		{str("Process running with session ID 3\nOutput:\nRead-only file system\n"), false},
		{json.RawMessage(`42`), false},
		{str("Process exited with code 99999999999999999999\nRead-only file system"), false},
	} {
		if got := rolloutOutputRefused(c.out); got != c.want {
			t.Errorf("rolloutOutputRefused(%s) = %v, want %v", c.out, got, c.want)
		}
	}
}

// TestRolloutCommand names the command of each shell tool as the model
// wrote it.
func TestRolloutCommand(t *testing.T) {
	for _, c := range []struct{ name, args, want string }{
		{"exec_command", `{"cmd":"touch f","yield_time_ms":1000}`, "touch f"},
		{"shell_command", `{"command":"go test ./..."}`, "go test ./..."},
		{"shell", `{"command":["bash","-lc","echo 'a b' > f"]}`, "echo 'a b' > f"},
		{"shell", `{"command":["touch","a b"]}`, "touch 'a b'"},
		{"shell", `{"command":[]}`, ""},
		{"apply_patch", `{"input":"*** Begin Patch"}`, ""},
		{"exec_command", `not json`, ""},
	} {
		if got := rolloutCommand(c.name, c.args); got != c.want {
			t.Errorf("rolloutCommand(%s, %s) = %q, want %q", c.name, c.args, got, c.want)
		}
	}
}

func TestCodexUnsandboxed(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"exec", "--json", "--sandbox", "read-only", "-"}, false},
		{[]string{"exec", "--dangerously-bypass-approvals-and-sandbox", "-"}, true},
		{[]string{"exec", "--yolo", "-"}, true},
		{[]string{"exec", "-s", "danger-full-access", "-"}, true},
		{[]string{"exec", "--sandbox=danger-full-access", "-"}, true},
		{[]string{"exec", "--sandbox", "-"}, false},
		{[]string{"exec", "--sandbox", "workspace-write", "danger-full-access"}, false},
	} {
		if got := codexUnsandboxed(c.args); got != c.want {
			t.Errorf("codexUnsandboxed(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestCodexRolloutPath finds a session's file in the folder of its day,
// read from its id (a UUIDv7), and nowhere else.
func TestCodexRolloutPath(t *testing.T) {
	home := t.TempDir()
	id := "01a21c59-7f55-7e01-a63a-9421c13dadc4" // 2026-11-27 09:32:37 UTC
	when, ok := uuidV7Time(id)
	if !ok || when.UTC().Format(time.DateTime) != "2026-11-27 09:32:37" {
		t.Fatalf("uuidV7Time(%s) = %v, %v", id, when.UTC(), ok)
	}
	if _, ok := uuidV7Time("0199-fake-thread"); ok {
		t.Error("uuidV7Time took an id that is no UUIDv7")
	}
	dir := filepath.Join(home, "sessions", when.Format("2006"), when.Format("01"), when.Format("02"))
	os.MkdirAll(dir, 0o755)
	want := filepath.Join(dir, "rollout-2026-11-27T09-32-37-"+id+".jsonl")
	os.WriteFile(want, nil, 0o644)
	os.WriteFile(filepath.Join(dir, "rollout-2026-11-27T09-32-37-01a21c59-0000-7e01-a63a-9421c13dadc4.jsonl"), nil, 0o644)
	if got := codexRolloutPath(home, id); got != want {
		t.Errorf("codexRolloutPath = %q, want %q", got, want)
	}
	for _, bad := range []string{"01a21c59-*", "../x", ""} {
		if got := codexRolloutPath(home, bad); got != "" {
			t.Errorf("codexRolloutPath(%q) = %q, want none", bad, got)
		}
	}
	if got := codexRolloutPath("", id); got != "" {
		t.Errorf("codexRolloutPath without a home = %q", got)
	}
}

// TestCodexHome: the agent's own CODEX_HOME first (the last one set), then
// the tool's, then ~/.codex.
func TestCodexHome(t *testing.T) {
	t.Setenv("CODEX_HOME", "/from/env")
	if got := codexHome([]string{"CODEX_HOME=/a", "X=1", "CODEX_HOME=/b"}); got != "/b" {
		t.Errorf("codexHome = %q, want /b", got)
	}
	if got := codexHome(nil); got != "/from/env" {
		t.Errorf("codexHome = %q, want /from/env", got)
	}
	t.Setenv("CODEX_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := codexHome(nil); got != "/home/u/.codex" {
		t.Errorf("codexHome = %q, want /home/u/.codex", got)
	}
}

// TestReadRolloutRefusals reads the refused commands of a session file in
// order, an output matched to its call by id, other tools and lines skipped.
func TestReadRolloutRefusals(t *testing.T) {
	lines := []string{
		`{"type":"session_meta","payload":{"id":"x"}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"touch a\"}","call_id":"c1"}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"c2"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"Process exited with code 0\nOutput:\na\n"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Process exited with code 1\nOutput:\ntouch: cannot touch 'a': Read-only file system\n"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Process exited with code 1\nOutput:\nRead-only file system\n"}}`,
		`{"type":"event_msg","payload":{"type":"function_call_output","call_id":"c9","output":"Process exited with code 1\nRead-only file system"}}`,
		`{broken "function_call`,
		`{"type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{}","call_id":"c3"}}`,
		`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c3","output":"Process exited with code 1\nRead-only file system"}}`,
	}
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
	got := readRolloutRefusals(path)
	if len(got) != 1 || string(got[0].ToolInput) != `{"command":"touch a"}` || got[0].ToolName != codexToolCommand {
		t.Errorf("refusals = %+v, want the one of touch a", got)
	}
	if got := readRolloutRefusals(filepath.Join(t.TempDir(), "none")); got != nil {
		t.Errorf("a missing file: %+v", got)
	}
}

// TestSessionRefusalsDedup adds a command of the session file only as many
// times more as the stream showed it, and keeps the stream's in bypass
// mode out entirely.
func TestSessionRefusalsDedup(t *testing.T) {
	home := t.TempDir()
	id := "01a21c59-7f55-7e01-a63a-9421c13dadc4"
	when, _ := uuidV7Time(id)
	dir := filepath.Join(home, "sessions", when.Format("2006"), when.Format("01"), when.Format("02"))
	os.MkdirAll(dir, 0o755)
	var b strings.Builder
	for i, cmd := range []string{"touch a", "touch a", "touch b"} {
		args, _ := json.Marshal(map[string]string{"cmd": cmd})
		call, _ := json.Marshal(map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call", "name": "exec_command", "arguments": string(args), "call_id": fmt.Sprint("c", i)}})
		out, _ := json.Marshal(map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call_output", "call_id": fmt.Sprint("c", i), "output": "Process exited with code 1\nRead-only file system\n"}})
		b.WriteString(string(call) + "\n" + string(out) + "\n")
	}
	os.WriteFile(filepath.Join(dir, "rollout-x-"+id+".jsonl"), []byte(b.String()), 0o644)
	env := []string{"CODEX_HOME=" + home}
	shown := []permissionDenial{{ToolName: codexToolCommand, ToolInput: jsonObject1("command", "touch a")}, {ToolName: codexToolFile, ToolInput: jsonObject1("path", "x")}}
	refused, more := codexAgent{}.sessionRefusals([]string{"exec", "-"}, env, id, shown)
	var names []string
	for _, d := range refused {
		names = append(names, string(d.ToolInput))
	}
	if want := `{"command":"touch a"} {"path":"x"} {"command":"touch a"} {"command":"touch b"}`; strings.Join(names, " ") != want || more != 2 {
		t.Errorf("refused = %s (%d more), want %s (2 more)", strings.Join(names, " "), more, want)
	}
	if refused, more := (codexAgent{}).sessionRefusals([]string{"exec", "--yolo", "-"}, env, id, shown); refused != nil || more != 0 {
		t.Errorf("bypass: %v, %d; want none", refused, more)
	}
	if refused, more := (codexAgent{}).sessionRefusals([]string{"exec", "-"}, env, "", shown); len(refused) != 2 || more != 0 {
		t.Errorf("no session: %v, %d; want the stream's", refused, more)
	}
}
