package main

// TestRealCodexCapture writes the real Codex CLI's transcripts in
// testdata/fixtures/codex/: `codex exec --json` run as the codex adapter
// runs it, against the fake Responses API (fakeresponses_test.go), one
// transcript per case below. It runs only when asked:
//
//	CLAUDE_ITERATE_TEST_CODEX=$(scripts/install-codex.sh | tail -n1) \
//	CLAUDE_ITERATE_CODEX_CAPTURE=1 go test -run TestRealCodexCapture -count=1 .
//
// Each case writes NAME.jsonl (standard output, as printed) and
// NAME.stderr, and its line in the fixtures' README says which version
// printed it and how it ended; the README's lines are printed to the test
// log to paste.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// codexCapture is one transcript to capture.
type codexCapture struct {
	name, about string
	// sandbox is codex's --sandbox, or "bypass" for
	// --dangerously-bypass-approvals-and-sandbox.
	sandbox string
	api     string // the fake API's script ($WORK: the workspace)
	prompt  string
	// interrupt sends SIGINT once stdout has a line matching it.
	interrupt string
}

var codexCaptures = []codexCapture{{
	name:    "exec-loop-step",
	about:   "workspace-write: a command, a failing command, apply_patch adding and updating files, the status file written by a command, a final message",
	sandbox: "workspace-write",
	prompt:  "Do the next item of TODO.md, then update .status.json.",
	api: `call exec_command {"cmd": "cat TODO.md"}
call exec_command {"cmd": "echo one > one.txt && echo wrote one"}
call exec_command {"cmd": "test -f missing.txt"}
patch *** Begin Patch\n*** Add File: notes.md\n+first note\n*** End Patch\n
patch *** Begin Patch\n*** Update File: TODO.md\n@@\n-- [ ] one\n+- [x] one\n*** End Patch\n
call exec_command {"cmd": "printf '{\"complete\": false, \"progress\": {\"completed\": 1, \"total\": 2}}\\n' > .status.json"}
text Item one is done; one item remains.`,
}, {
	name:    "exec-read-only-refused",
	about:   "read-only sandbox: a command writing in the workspace and one writing outside it fail (Read-only file system); apply_patch is rejected with no item in the stream (stderr says so)",
	sandbox: "read-only",
	prompt:  "Write the report.",
	api: `call exec_command {"cmd": "echo x > report.txt; echo rc=$?"}
call exec_command {"cmd": "touch /etc/claude-iterate-codex-capture"}
patch *** Begin Patch\n*** Add File: report.txt\n+the report\n*** End Patch\n
call exec_command {"cmd": "ls"}
text I could not write the report: the sandbox is read-only.`,
}, {
	name:    "exec-workspace-write-refused",
	about:   "workspace-write: writing outside the workspace fails (a command and apply_patch), writing inside succeeds",
	sandbox: "workspace-write",
	prompt:  "Install the tool.",
	api: `call exec_command {"cmd": "touch /etc/claude-iterate-codex-capture"}
patch *** Begin Patch\n*** Add File: /etc/claude-iterate-codex-capture\n+x\n*** End Patch\n
call exec_command {"cmd": "touch inside.txt && echo ok"}
text Done what the sandbox allows.`,
}, {
	name:    "exec-bypass",
	about:   "--dangerously-bypass-approvals-and-sandbox: a command, apply_patch, a message",
	sandbox: "bypass",
	prompt:  "Say hello in a file.",
	api: `call exec_command {"cmd": "echo hello > hello.txt && cat hello.txt"}
patch *** Begin Patch\n*** Add File: bye.txt\n+bye\n*** End Patch\n
text Hello is written.`,
}, {
	name:    "exec-usage-limit",
	about:   "the first model request answered 429 usage_limit_reached (plan plus, resets in an hour): turn.failed, exit 1",
	sandbox: "workspace-write",
	prompt:  "Say hello.",
	api:     `limit 3600`,
}, {
	name:    "exec-usage-limit-mid-turn",
	about:   "a command, then 429 usage_limit_reached on the next model request",
	sandbox: "workspace-write",
	prompt:  "Run the tests.",
	api: `call exec_command {"cmd": "echo tests pass"}
limit 600`,
}, {
	name:    "exec-api-500",
	about:   "the model request answered 500 (no retries configured): turn.failed, exit 1",
	sandbox: "workspace-write",
	prompt:  "Say hello.",
	api:     `error 500 The server had an error while processing your request.`,
}, {
	name:    "exec-api-400",
	about:   "the model request answered 400 invalid_request_error: turn.failed, exit 1",
	sandbox: "workspace-write",
	prompt:  "Say hello.",
	api:     `error 400 Invalid value for 'input'.`,
}, {
	name:    "exec-stream-failed",
	about:   "a stream ending in response.failed (server_error) after a command",
	sandbox: "workspace-write",
	prompt:  "Say hello.",
	api: `call exec_command {"cmd": "echo step"}
fail server_error The model crashed.`,
}, {
	name:      "exec-sigint-during-command",
	about:     "SIGINT to codex while its command (sleep 300) runs",
	sandbox:   "workspace-write",
	prompt:    "Run the long job.",
	api:       `call exec_command {"cmd": "echo start && sleep 300", "yield_time_ms": 30000}`,
	interrupt: `"type":"item.started".*"command_execution"`,
}}

func TestRealCodexCapture(t *testing.T) {
	if os.Getenv("CLAUDE_ITERATE_CODEX_CAPTURE") == "" {
		t.Skip("$CLAUDE_ITERATE_CODEX_CAPTURE is not set: this writes testdata/fixtures/codex/ from the real CLI")
	}
	cli := realCodexCLI(t)
	version, err := exec.Command(cli, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	outDir, err := filepath.Abs("testdata/fixtures/codex")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range codexCaptures {
		t.Run(c.name, func(t *testing.T) {
			line := captureCodex(t, cli, c, outDir)
			t.Logf("README: - `%s.jsonl`: %s (%s; %s)", c.name, c.about, strings.TrimSpace(string(version)), line)
		})
	}
}

// captureCodex runs one case and writes its transcript; it returns how the
// CLI ended.
func captureCodex(t *testing.T, cli string, c codexCapture, outDir string) string {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	codexHome := filepath.Join(dir, "codexhome")
	for _, d := range []string{ws, codexHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "TODO.md"), []byte("- [ ] one\n- [ ] two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := parseResponsesScript(strings.ReplaceAll(c.api, "$WORK", ws))
	if err != nil {
		t.Fatal(err)
	}
	api := startFakeResponses(script, t.Logf)
	defer api.close()
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexConfig(api.url())), 0o600); err != nil {
		t.Fatal(err)
	}
	// The adapter's arguments (agent_codex.go), and --strict-config: a
	// config key this version does not know fails the capture.
	args := []string{"exec", "--json", "--skip-git-repo-check", "--strict-config"}
	switch c.sandbox {
	case "bypass":
		args = append(args, "--dangerously-bypass-approvals-and-sandbox")
	default:
		args = append(args, "--sandbox", c.sandbox)
	}
	args = append(args, "-c", "developer_instructions="+tomlQuote("You are run by claude-iterate; update .status.json when an item is done."), "-")
	cmd := exec.Command(cli, args...)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.Env = append(cmd.Env, codexEnv(codexHome, api)...)
	cmd.Stdin = strings.NewReader(c.prompt + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var stdout bytes.Buffer
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<24)
	interrupted := false
	for sc.Scan() {
		stdout.Write(sc.Bytes())
		stdout.WriteByte('\n')
		if c.interrupt != "" && !interrupted && matchLine(c.interrupt, sc.Text()) {
			// Let the command start before the interrupt, as a user's
			// Ctrl+C comes while it runs.
			time.Sleep(time.Second)
			cmd.Process.Signal(syscall.SIGINT)
			interrupted = true
		}
	}
	err = cmd.Wait()
	end := "exit 0"
	if ee, ok := err.(*exec.ExitError); ok {
		end = ee.ProcessState.String()
	} else if err != nil {
		t.Fatal(err)
	}
	if c.interrupt != "" && !interrupted {
		t.Errorf("no line matched %q: never interrupted", c.interrupt)
	}
	api.mu.Lock()
	stray := api.stray
	api.mu.Unlock()
	if len(stray) > 0 {
		t.Errorf("requests for other hosts: %s", strings.Join(stray, ", "))
	}
	for name, data := range map[string][]byte{c.name + ".jsonl": stdout.Bytes(), c.name + ".stderr": stderr.Bytes()} {
		if err := os.WriteFile(filepath.Join(outDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Replace(end, "exit status", "exit", 1)
}

// matchLine reports whether line matches the regular expression re.
func matchLine(re, line string) bool {
	return regexp.MustCompile(re).MatchString(line)
}

// tomlQuote is s as a TOML basic string (no control characters expected).
func tomlQuote(s string) string {
	return fmt.Sprintf("%q", s)
}
