package main

// This file implements the fake codex CLI that testscript scenarios run in
// place of the real one (`codex exec --json ... -`). It refuses any other
// command line (exit 2), reads the prompt from stdin to EOF, prints
// thread.started and turn.started, then runs the script named by
// $FAKE_CODEX as the fake claude runs $FAKE_CLAUDE (call filters [N],
// $FAKE_CALL, $VARS; the calls counted in $FAKE_CODEX.calls), each line one
// directive. Without $FAKE_CODEX it streams a minimal successful turn. The
// events have the real CLI's shapes (codex-rs/exec/src/exec_events.rs).
//
// Codex's directives (every other one is the fake claude's: record, write,
// touch, wait-file, grandchild, hang, close-output, sleep, pid, trap-term,
// exit, ...):
//
//	text TEXT            an agent_message item
//	reasoning TEXT       a reasoning item
//	command EXIT CMD     a command_execution item, started and completed
//	                     with exit code EXIT, its output "output of CMD"
//	command-start CMD    a command_execution item started (id cmd-N)
//	command-end EXIT CMD its completion
//	declined CMD         a command_execution item with status declined
//	sandboxed CMD        a command that failed in the sandbox (exit 1,
//	                     "Read-only file system")
//	file PATH            a file_change item (update PATH), completed
//	done                 turn.completed, usage 1000 in (200 cached), 300 out
//	usage IN CACHED OUT  turn.completed with that usage
//	fail TEXT            turn.failed with TEXT, then exit 1
//	limit WHEN           an error and turn.failed "You've hit your usage
//	                     limit. ... try again WHEN." (e.g. "in 2 seconds"),
//	                     then exit 1, as the real CLI does
//	error TEXT           a top-level error event
//	trap-int DURATION    on SIGINT: clean up for DURATION, touch
//	                     $FAKE_CODEX.cleaned, print turn.failed, exit 130
//	quiet-refused CMD    a command its sandbox refused at once: no item in
//	                     the stream, only in the session file
//
// With $CODEX_HOME set, each command directive also goes to the session
// file, as the real CLI writes it (codexrollout.go):
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl, a
// function_call and its function_call_output; with $FAKE_CODEX_ROLLOUT=fifo
// that path is a FIFO nobody writes, =link a link to $FAKE_CODEX_ROLLOUT_TO.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func fakeCodexMain() {
	os.Exit(fakeCodex())
}

func fakeCodex() int {
	args := os.Args[1:]
	if len(args) > 0 && args[0] != "exec" {
		return fakeCodexInteractive(args)
	}
	if len(args) < 3 || args[0] != "exec" || args[1] != "--json" || args[len(args)-1] != "-" {
		fmt.Fprintf(os.Stderr, "fake codex: want exec --json ... -, got %q\n", args)
		return 2
	}
	stdin, _ := io.ReadAll(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fakeEmitTo(out, map[string]any{"type": "thread.started", "thread_id": fakeCodexThread})
	fakeEmitTo(out, map[string]any{"type": "turn.started"})
	out.Flush()
	script := os.Getenv("FAKE_CODEX")
	if script == "" {
		fakeCodexDirective(out, "text", "Hello from the fake codex.", "")
		fakeCodexDirective(out, "done", "", "")
		return 0
	}
	return fakeRunScript("fake codex", script, func(verb, arg string, call int) (int, bool) {
		if code, done, known := fakeCodexDirective(out, verb, arg, script); known {
			return code, done
		}
		return fakeDirective(out, verb, arg, call, script, stdin)
	})
}

// fakeCodexInteractive plays codex's terminal UI for setup and edit: it
// records its arguments in $FAKE_CODEX_ARGV (when set) and writes a task to
// the INSTRUCTIONS.md that its developer_instructions name.
func fakeCodexInteractive(args []string) int {
	if p := os.Getenv("FAKE_CODEX_ARGV"); p != "" {
		os.WriteFile(p, []byte(strings.Join(args, "\n")+"\n"), 0o644)
	}
	for i := 0; i+1 < len(args); i++ {
		v, ok := strings.CutPrefix(args[i+1], "developer_instructions=")
		if args[i] != "-c" || !ok {
			continue
		}
		for _, word := range strings.Fields(v) {
			word = strings.TrimRight(strings.Trim(word, "`\"'()"), ".,:;")
			if strings.HasPrefix(word, "/") && strings.HasSuffix(word, "/INSTRUCTIONS.md") {
				os.WriteFile(word, []byte("# Task\n\nWritten by the fake codex.\n"), 0o644)
				fmt.Println("CODEX WROTE THE TASK")
				return 0
			}
		}
	}
	fmt.Fprintln(os.Stderr, "fake codex: no INSTRUCTIONS.md in the developer instructions")
	return 3
}

// fakeCodexItems numbers the items of one call.
var fakeCodexItems int

// fakeCodexThread is the fake's session id.
const fakeCodexThread = "0199-fake-thread"

// fakeCodexRollout adds a command call and its output (exit code exit,
// output text) to the session file under $CODEX_HOME, if it is set.
func fakeCodexRollout(cmd string, exit int, output string) {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		return
	}
	now := time.Now()
	dir := filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "rollout-"+now.Format("2006-01-02T15-04-05")+"-"+fakeCodexThread+".jsonl")
	if m, _ := filepath.Glob(filepath.Join(dir, "rollout-*-"+fakeCodexThread+".jsonl")); len(m) > 0 {
		path = m[0]
	}
	switch os.Getenv("FAKE_CODEX_ROLLOUT") {
	case "fifo":
		syscall.Mkfifo(path, 0o644)
		return
	case "link":
		os.Symlink(os.Getenv("FAKE_CODEX_ROLLOUT_TO"), path)
		return
	}
	fakeCodexItems++
	id := fmt.Sprintf("call_%d", fakeCodexItems)
	args, _ := json.Marshal(map[string]string{"cmd": cmd})
	text := fmt.Sprintf("Chunk ID: 0a1b2c\nWall time: 0.0000 seconds\nProcess exited with code %d\nOriginal token count: 14\nOutput:\n%s", exit, output)
	var b bytes.Buffer
	for _, p := range []map[string]any{
		{"type": "function_call", "name": "exec_command", "arguments": string(args), "call_id": id},
		{"type": "function_call_output", "call_id": id, "output": text},
	} {
		line, _ := json.Marshal(map[string]any{"timestamp": now.UTC().Format(time.RFC3339Nano), "type": "response_item", "payload": p})
		b.Write(append(line, '\n'))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	f.Write(b.Bytes())
	f.Close()
}

// fakeCodexDirective runs one of codex's own directives; known is false for
// any other.
func fakeCodexDirective(out *bufio.Writer, verb, arg, script string) (code int, done, known bool) {
	item := func(typ string, fields map[string]any) map[string]any {
		fakeCodexItems++
		m := map[string]any{"id": fmt.Sprintf("item_%d", fakeCodexItems), "type": typ}
		for k, v := range fields {
			m[k] = v
		}
		return m
	}
	emit := func(typ string, v map[string]any) {
		v["type"] = typ
		fakeEmitTo(out, v)
		out.Flush()
	}
	command := func(id, cmd string, exit *int, status, output string) map[string]any {
		m := item("command_execution", map[string]any{"command": cmd, "aggregated_output": output, "exit_code": nil, "status": status})
		if id != "" {
			m["id"] = id
		}
		if exit != nil {
			m["exit_code"] = *exit
		}
		return m
	}
	usage := func(in, cached, outTok int) {
		emit("turn.completed", map[string]any{"usage": map[string]any{"input_tokens": in, "cached_input_tokens": cached, "output_tokens": outTok}})
	}
	switch verb {
	case "text":
		emit("item.completed", map[string]any{"item": item("agent_message", map[string]any{"text": arg})})
	case "reasoning":
		emit("item.completed", map[string]any{"item": item("reasoning", map[string]any{"text": arg})})
	case "command":
		n, cmd, _ := strings.Cut(arg, " ")
		exit, _ := strconv.Atoi(n)
		status := "completed"
		if exit != 0 {
			status = "failed"
		}
		started := command("", cmd, nil, "in_progress", "")
		emit("item.started", map[string]any{"item": started})
		emit("item.completed", map[string]any{"item": command(started["id"].(string), cmd, &exit, status, "output of "+cmd+"\n")})
		fakeCodexRollout(cmd, exit, "output of "+cmd+"\n")
	case "command-start":
		emit("item.started", map[string]any{"item": command("cmd-"+strconv.Itoa(fakeCodexItems+1), arg, nil, "in_progress", "")})
	case "command-end":
		n, cmd, _ := strings.Cut(arg, " ")
		exit, _ := strconv.Atoi(n)
		emit("item.completed", map[string]any{"item": command("cmd-"+strconv.Itoa(fakeCodexItems), cmd, &exit, "completed", "output of "+cmd+"\n")})
	case "declined":
		emit("item.completed", map[string]any{"item": command("", arg, nil, "declined", "")})
	case "sandboxed":
		exit := 1
		emit("item.started", map[string]any{"item": command("sbx", arg, nil, "in_progress", "")})
		emit("item.completed", map[string]any{"item": command("sbx", arg, &exit, "failed", "sh: 1: cannot create x: Read-only file system\n")})
		fakeCodexRollout(arg, exit, "sh: 1: cannot create x: Read-only file system\n")
	case "quiet-refused":
		fakeCodexRollout(arg, 1, arg+": Read-only file system\n")
	case "file":
		emit("item.completed", map[string]any{"item": item("file_change", map[string]any{"changes": []any{map[string]any{"path": arg, "kind": "update"}}, "status": "completed"})})
	case "done":
		usage(1000, 200, 300)
	case "usage":
		var in, cached, o int
		fmt.Sscan(arg, &in, &cached, &o)
		usage(in, cached, o)
	case "fail":
		emit("turn.failed", map[string]any{"error": map[string]any{"message": arg}})
		return 1, true, true
	case "limit":
		msg := "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again " + arg + "."
		emit("error", map[string]any{"message": msg})
		emit("turn.failed", map[string]any{"error": map[string]any{"message": msg}})
		return 1, true, true
	case "error":
		emit("error", map[string]any{"message": arg})
	case "trap-int":
		d, _ := time.ParseDuration(arg)
		fakeTrapInt("fake codex", script, out, func() { time.Sleep(d) }, `{"type":"turn.failed","error":{"message":"interrupted"}}`, 130)
	default:
		return 0, false, false
	}
	return 0, false, true
}
