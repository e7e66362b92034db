package main

// This file finds the commands codex's sandbox refused that its stream
// does not show. Codex (0.171.0, unified exec) reports a command that its
// sandbox refused at once (`touch f` in the read-only sandbox, exiting in
// the first milliseconds) to the model only: no command_execution item, no
// stderr line; one that ran a little longer has its item. Which of the two
// a refusal gets depends on the machine's speed (TestRealCodex/refused
// failed on a quiet machine and passed on a loaded one). Its session file,
// the rollout ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<session>.jsonl),
// holds every call the model made (a function_call response_item) and what
// it got back (function_call_output): the refused commands are those whose
// output says the sandbox refused them (codexRefused's words, with their
// exit code). They are added to those the stream showed, each command once
// more than the stream already counted it.
//
// In codex's bypass mode nothing is a refusal (no sandbox refuses
// anything); when the session or its file is not found (--ephemeral,
// another CODEX_HOME) the stream's refusals stand alone.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bounds of the rollout's reading: its lines (a longer one, a huge output,
// is skipped) and the whole file.
const (
	rolloutMaxLine  = 4 << 20
	rolloutMaxBytes = 256 << 20
)

// sessionRefusals returns the iteration's refused calls: shown (the
// stream's and stderr's) and, after them, the more commands codex's session
// file says its sandbox refused; none at all without a sandbox (a command
// that failed on "Permission denied" there is no sandbox's refusal). args
// are the command line codex ran with, env what was added to its
// environment.
func (codexAgent) sessionRefusals(args, env []string, session string, shown []permissionDenial) (refused []permissionDenial, more int) {
	if codexUnsandboxed(args) {
		return nil, 0
	}
	path := ""
	if session != "" {
		path = codexRolloutPath(codexHome(env), session)
	}
	if path == "" {
		return shown, 0
	}
	seen := map[string]int{}
	for _, d := range shown {
		if d.ToolName == codexToolCommand {
			seen[string(d.ToolInput)]++
		}
	}
	refused = shown
	for _, d := range readRolloutRefusals(path) {
		if k := string(d.ToolInput); seen[k] > 0 {
			seen[k]--
			continue
		}
		refused = append(refused[:len(refused):len(refused)], d)
		more++
	}
	return refused, more
}

// codexUnsandboxed reports whether args run codex without its sandbox.
func codexUnsandboxed(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--dangerously-bypass-approvals-and-sandbox", a == "--yolo":
			return true
		case a == "--sandbox=danger-full-access", a == "-s=danger-full-access":
			return true
		case (a == "--sandbox" || a == "-s") && i+1 < len(args) && args[i+1] == "danger-full-access":
			return true
		}
	}
	return false
}

// codexHome is codex's home: $CODEX_HOME as the agent got it, else
// ~/.codex; "" when neither is known.
func codexHome(env []string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok {
			return v
		}
	}
	if v := os.Getenv("CODEX_HOME"); v != "" {
		return v
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".codex")
	}
	return ""
}

// codexRolloutPath finds session's rollout under home: in the folders of
// the days (local and UTC) of the session's start, which its id (a UUIDv7)
// holds, and of now.
func codexRolloutPath(home, session string) string {
	if home == "" || strings.ContainsAny(session, `/\*?[`) {
		return ""
	}
	now := time.Now()
	times := []time.Time{now, now.UTC()}
	if t, ok := uuidV7Time(session); ok {
		times = append(times, t, t.UTC(), t.Add(-time.Second), t.Add(time.Second).UTC())
	}
	var dirs []string
	for _, t := range times {
		d := filepath.Join(home, "sessions", t.Format("2006"), t.Format("01"), t.Format("02"))
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range slices.Backward(dirs) {
		if m := globDir(d, "rollout-*-"+session+".jsonl"); len(m) > 0 {
			return m[0]
		}
	}
	return ""
}

// uuidV7Time is the time a UUIDv7 holds (its first 48 bits, Unix ms).
func uuidV7Time(id string) (time.Time, bool) {
	h := strings.ReplaceAll(id, "-", "")
	if len(h) != 32 || h[12] != '7' {
		return time.Time{}, false
	}
	b, err := hex.DecodeString(h[:12])
	if err != nil {
		return time.Time{}, false
	}
	var ms int64
	for _, c := range b {
		ms = ms<<8 | int64(c)
	}
	return time.UnixMilli(ms), true
}

// rolloutLine is one line of a rollout, reduced to a response item's call
// and output.
type rolloutLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type      string          `json:"type"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		CallID    string          `json:"call_id"`
		Output    json.RawMessage `json:"output"`
	} `json:"payload"`
}

// readRolloutRefusals reads the rollout at path (through the one reader:
// a regular file, never waited on) and returns its refused commands, in
// order; nil when it cannot be read.
func readRolloutRefusals(path string) []permissionDenial {
	f, _, err := openRegular(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	calls := map[string]string{} // call id → command
	var refused []permissionDenial
	lr := newLineReader(io.LimitReader(f, rolloutMaxBytes), rolloutMaxLine) // streamjson.go's
	defer lr.close()
	for {
		line, _, err := lr.next()
		if line != nil && bytes.Contains(line, []byte(`"function_call`)) {
			var l rolloutLine
			if json.Unmarshal(line, &l) == nil && l.Type == "response_item" {
				p := &l.Payload
				switch p.Type {
				case "function_call":
					if cmd := rolloutCommand(p.Name, p.Arguments); cmd != "" && p.CallID != "" {
						calls[p.CallID] = cmd
					}
				case "function_call_output":
					if cmd, ok := calls[p.CallID]; ok && rolloutOutputRefused(p.Output) {
						refused = append(refused, permissionDenial{ToolName: codexToolCommand, ToolUseID: p.CallID, ToolInput: jsonObject1("command", cmd)})
					}
					delete(calls, p.CallID)
				}
			}
		}
		if err != nil || len(refused) == maxToolsCounted {
			return refused
		}
	}
}

// rolloutCommand is the command of a call to one of codex's shell tools,
// as the model wrote it: exec_command's cmd, shell_command's command, the
// script of shell's ["bash", "-lc", script] (else its argv joined); "" for
// another tool.
func rolloutCommand(name, arguments string) string {
	var a struct {
		Cmd     string          `json:"cmd"`
		Command json.RawMessage `json:"command"`
	}
	if json.Unmarshal([]byte(arguments), &a) != nil {
		return ""
	}
	switch name {
	case "exec_command":
		return a.Cmd
	case "shell_command":
		var s string
		if json.Unmarshal(a.Command, &s) == nil {
			return s
		}
	case "shell", "container.exec":
		var argv []string
		if json.Unmarshal(a.Command, &argv) == nil && len(argv) > 0 {
			return codexCommandShown(shellJoin(argv))
		}
	}
	return ""
}

// rolloutExitRe finds a shell tool's exit code in its output: "Process
// exited with code N" (exec_command), "Exit code: N" (shell_command), or
// the JSON of shell's {"output": …, "metadata": {"exit_code": N}}.
var rolloutExitRe = regexp.MustCompile(`(?m)^Process exited with code (-?\d+)$|^Exit code: (-?\d+)$|"exit_code":\s*(-?\d+)`)

// rolloutOutputRefused reports whether a call's output (a JSON string, or
// an object whose content is one) says codex's sandbox refused it, as
// codexRefused judges a command_execution item.
func rolloutOutputRefused(raw json.RawMessage) bool {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		var o struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(raw, &o) != nil {
			return false
		}
		text = o.Content
	}
	m := rolloutExitRe.FindStringSubmatch(text)
	if m == nil {
		return false // still running, or no command's output
	}
	code, err := strconv.Atoi(m[1] + m[2] + m[3])
	if err != nil {
		return false
	}
	status := "completed"
	if code != 0 {
		status = "failed"
	}
	return codexRefused(&codexItem{Type: "command_execution", Status: status, ExitCode: &code, Output: codexOutput{raw: []byte(text)}})
}
