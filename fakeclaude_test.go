package main

// This file implements the fake claude CLI that testscript scenarios run in
// place of the real one. Its behaviour is a script named by $FAKE_CLAUDE (a
// file, relative to the current directory); each line is one directive, run in
// order. A line may start with a call filter — [2] only on the second call,
// [2-] from the second on, [1-3] on the first three — counted in the file
// $FAKE_CLAUDE.calls. $VARS in a directive's argument are expanded, and
// $FAKE_CALL is the call's number (a file the fake writes in each call then
// differs from call to call, as an agent's own writes do). Without
// $FAKE_CLAUDE the fake streams a minimal successful session.
//
// Called with --help (and nothing counted), the fake prints a help text that
// names --append-system-prompt[-file], as the real CLI's does, or the file
// $FAKE_CLAUDE_HELP when it is set (an older CLI's help); with
// $FAKE_CLAUDE_HELP_LEAVE=PIDFILE it leaves a sleeper holding its output.
//
// Run without -p, as setup and edit run the real CLI, the fake is
// interactive: it leaves stdin (the terminal) alone instead of reading a
// prompt from it, and without $FAKE_CLAUDE but with a system prompt
// (--append-system-prompt) it writes a task to the INSTRUCTIONS.md the
// system prompt names (the write-named directive) and exits 0.
//
// Directives:
//
//	record DIR           write DIR/argv-N, DIR/stdin-N, DIR/env-N for call N,
//	                     and DIR/sysprompt-N, a copy of the file given with
//	                     --append-system-prompt-file, DIR/sysprompt-mode-N its
//	                     permissions (-rw-------)
//	emit JSON            print one line to stdout
//	print TEXT           print TEXT (unquoted, may be malformed JSON) to stdout
//	printn TEXT          print TEXT without a final newline
//	replay FILE          copy FILE to stdout ($VARS expanded in FILE)
//	text TEXT            an assistant text event
//	result TEXT          a success result event with result TEXT
//	error-result TEXT    an error result (is_error true) with result TEXT
//	verdict TEXT         play the verifier: when the prompt asks for a
//	                     verdict (names "verdict"), a success result with
//	                     TEXT (\n escapes), then exit 0; otherwise nothing
//	bigline N            an assistant text event of N bytes
//	bigline-twice N      the same, its "text" key twice (left to encoding/json)
//	stderr TEXT          print TEXT to stderr
//	write FILE TEXT      write TEXT (with \n escapes) to FILE, making its directory
//	touch FILE           create FILE
//	rm FILE              remove FILE
//	pid FILE             write the fake's pid to FILE
//	signal-parent SIG    send SIG (INT, TERM, HUP) to claude-iterate
//	sh COMMAND           run COMMAND with sh -c, its output to stderr
//	daemon PIDFILE       double-fork a sleeper (re-parented to the tool)
//	daemon-scrubbed PIDFILE
//	                     the same with an empty environment, in a new session
//	ppid FILE            write its parent's (claude-iterate's) pid to FILE
//	wait-file FILE       block until FILE exists (the test's go-ahead)
//	wait-text FILE TEXT  block until FILE contains TEXT (e.g. the tool's output)
//	sleep DURATION       sleep (the agent's own pace, never test sync)
//	trap-int DURATION    on SIGINT: say so on stderr, clean up for DURATION,
//	                     touch $FAKE_CLAUDE.cleaned, emit an
//	                     error_during_execution result and exit 0
//	trap-int-wait FILE   on SIGINT: clean up until FILE exists, then as trap-int
//	trap-term DURATION   on SIGTERM or SIGHUP: touch $FAKE_CLAUDE.terminating,
//	                     clean up for DURATION, touch $FAKE_CLAUDE.cleaned,
//	                     exit 143
//	ignore SIG...        ignore INT, TERM, HUP
//	grandchild PIDFILE [pipe]
//	                     start a sleeper in its own session (as the real CLI
//	                     runs its tools), recording its pid; with "pipe" it
//	                     keeps the fake's stdout open
//	limit SECONDS        a rejected rate_limit_event resetting SECONDS from now,
//	                     the CLI's limit text and a 429 error result
//	hang                 block forever
//	close-output [stdout]
//	                     close stdout and stderr, or stdout alone (what was
//	                     printed flushed first), and go on, alive
//	exit N               exit with status N
//
// Directives for the interactive mode:
//
//	write-named NAME TEXT  write TEXT (with \n escapes) to the file NAME whose
//	                     path the --append-system-prompt argument gives; exit 3
//	                     if it gives none
//	ask TEXT             print TEXT, then read a line from stdin into
//	                     $FAKE_ANSWER (for the directives after it)
//	on-int TEXT          on SIGINT, print TEXT to stderr and go on, as the real
//	                     CLI does on a first Ctrl+C
//	suspend              stop itself alone with SIGSTOP, as the real CLI does
//	                     on Ctrl+Z, and go on once continued
//	stty-raw             turn the terminal's ICANON and ECHO off and leave them
//	                     so, as a CLI that crashed would

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func fakeClaudeMain() {
	os.Exit(fakeClaude())
}

func fakeClaude() int {
	if len(os.Args) == 2 && os.Args[1] == "--help" {
		return fakeHelp()
	}
	interactive := !fakeHasArg("-p")
	var stdin []byte
	if !interactive {
		// Like the real CLI in -p mode, read the prompt from stdin to EOF.
		stdin, _ = io.ReadAll(os.Stdin)
	}
	script := os.Getenv("FAKE_CLAUDE")
	if script == "" && interactive && fakeSystemPrompt() != "" {
		if code, done := fakeDirective(bufio.NewWriter(os.Stdout), "write-named", `INSTRUCTIONS.md # Task\n\nWritten by the fake claude.\n`, 1, "", nil); done {
			return code
		}
		return 0
	}
	if script == "" {
		fakeEmit(map[string]any{"type": "system", "subtype": "init", "session_id": "fake", "tools": []string{"Bash"}, "model": "fake"})
		fakeEmit(fakeAssistantText("Hello from the fake claude."))
		fakeEmit(fakeResult(false, "done"))
		return 0
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	return fakeRunScript("fake claude", script, func(verb, arg string, call int) (int, bool) {
		return fakeDirective(out, verb, arg, call, script, stdin)
	})
}

// fakeRunScript runs the script file path, as both fakes do: it counts the
// call in path.calls and sets $FAKE_CALL to its number, skips blank lines,
// comments and the lines whose call filter leaves this call out, expands
// $VARS in each directive's argument and runs it; done reports that the fake
// must exit with code. who starts the fake's messages.
func fakeRunScript(who, path string, run func(verb, arg string, call int) (code int, done bool)) int {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", who, err)
		return 3
	}
	call := fakeNextCall(path + ".calls")
	os.Setenv("FAKE_CALL", strconv.Itoa(call))
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			end := strings.Index(line, "]")
			if end < 0 || !fakeCallMatches(line[1:end], call) {
				continue
			}
			line = strings.TrimSpace(line[end+1:])
		}
		verb, arg, _ := strings.Cut(line, " ")
		if code, done := run(verb, os.ExpandEnv(arg), call); done {
			return code
		}
	}
	return 0
}

// fakeDirective runs one directive; done reports that the fake must exit with
// code.
func fakeDirective(out *bufio.Writer, verb, arg string, call int, script string, stdin []byte) (code int, done bool) {
	flush := func() { out.Flush() }
	switch verb {
	case "record":
		os.MkdirAll(arg, 0o755)
		n := strconv.Itoa(call)
		os.WriteFile(filepath.Join(arg, "argv-"+n), []byte(strings.Join(os.Args[1:], "\n")+"\n"), 0o644)
		os.WriteFile(filepath.Join(arg, "stdin-"+n), stdin, 0o644)
		env := os.Environ()
		sort.Strings(env)
		os.WriteFile(filepath.Join(arg, "env-"+n), []byte(strings.Join(env, "\n")+"\n"), 0o644)
		for i, a := range os.Args[:len(os.Args)-1] {
			if a == "--append-system-prompt-file" {
				data, err := os.ReadFile(os.Args[i+1])
				if err != nil {
					fmt.Fprintf(os.Stderr, "fake claude: %v\n", err)
					return 1, true
				}
				os.WriteFile(filepath.Join(arg, "sysprompt-"+n), data, 0o644)
				if fi, err := os.Stat(os.Args[i+1]); err == nil {
					os.WriteFile(filepath.Join(arg, "sysprompt-mode-"+n), []byte(fi.Mode().String()+"\n"), 0o644)
				}
			}
		}
	case "emit":
		fmt.Fprintln(out, arg)
		flush()
	case "print":
		fmt.Fprintln(out, arg)
		flush()
	case "printn":
		fmt.Fprint(out, arg)
		flush()
	case "replay":
		f, err := os.Open(arg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fake claude: %v\n", err)
			return 3, true
		}
		io.Copy(out, f)
		f.Close()
		flush()
	case "text":
		fakeEmitTo(out, fakeAssistantText(arg))
		flush()
	case "result":
		fakeEmitTo(out, fakeResult(false, arg))
		flush()
	case "error-result":
		fakeEmitTo(out, fakeResult(true, arg))
		flush()
	case "verdict":
		if !strings.Contains(string(stdin), `"verdict"`) {
			break
		}
		fakeEmitTo(out, fakeAssistantText("Verifying."))
		fakeEmitTo(out, fakeResult(false, strings.ReplaceAll(arg, `\n`, "\n")))
		flush()
		return 0, true
	case "bigline":
		n, _ := strconv.Atoi(arg)
		fakeEmitTo(out, fakeAssistantText(strings.Repeat("x", n)))
		flush()
	case "bigline-twice":
		// The same text event with its key twice: the fast decoder hands
		// it to encoding/json.
		n, _ := strconv.Atoi(arg)
		fmt.Fprintf(out, "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"y\",\"text\":\"%s\"}]}}\n", strings.Repeat("x", n))
		flush()
	case "stderr":
		fmt.Fprintln(os.Stderr, arg)
	case "write":
		file, text, _ := strings.Cut(arg, " ")
		os.MkdirAll(filepath.Dir(file), 0o755)
		os.WriteFile(file, []byte(strings.ReplaceAll(text, `\n`, "\n")), 0o644)
	case "touch":
		os.WriteFile(arg, nil, 0o644)
	case "rm":
		os.Remove(arg)
	case "pid":
		fakeWritePID(arg, os.Getpid())
	case "ppid":
		fakeWritePID(arg, os.Getppid())
	case "signal-parent":
		sig := map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP}[arg]
		syscall.Kill(os.Getppid(), sig)
	case "sh":
		cmd := exec.Command("sh", "-c", arg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "fake claude: sh: %v\n", err)
		}
	case "daemon":
		// Double fork: the sleeper's parent exits at once, so it re-parents
		// to the nearest subreaper (claude-iterate).
		exec.Command("sh", "-c", "sleep 3600 & echo $! > "+arg+".tmp && mv "+arg+".tmp "+arg).Run()
	case "daemon-scrubbed":
		// A daemon that scrubbed its environment (no CLAUDE_ITERATE_RUN)
		// and left the session: env -i, setsid, double fork.
		exec.Command("env", "-i", "PATH="+os.Getenv("PATH"), "setsid", "sh", "-c", "sleep 3600 & echo $! > "+arg+".tmp && mv "+arg+".tmp "+arg).Run()
	case "wait-file":
		for !fileExists(arg) {
			time.Sleep(10 * time.Millisecond)
		}
	case "wait-text":
		file, text, _ := strings.Cut(arg, " ")
		for {
			data, _ := os.ReadFile(file)
			if strings.Contains(string(data), text) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	case "sleep":
		d, _ := time.ParseDuration(arg)
		time.Sleep(d)
	case "trap-int", "trap-int-wait":
		// trap-int-wait cleans up until the file arg exists.
		cleanup := func() {
			for !fileExists(arg) {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if verb == "trap-int" {
			d, _ := time.ParseDuration(arg)
			cleanup = func() { time.Sleep(d) }
		}
		b, _ := json.Marshal(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "num_turns": 1, "total_cost_usd": 0.001})
		fakeTrapInt("fake claude", script, out, cleanup, string(b), 0)
	case "trap-term":
		d, _ := time.ParseDuration(arg)
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			sig := <-c
			fmt.Fprintf(os.Stderr, "fake claude: got %v, cleaning up\n", sig)
			os.WriteFile(script+".terminating", nil, 0o644)
			time.Sleep(d)
			os.WriteFile(script+".cleaned", nil, 0o644)
			out.Flush()
			os.Exit(143)
		}()
	case "ignore":
		for _, s := range strings.Fields(arg) {
			signal.Ignore(map[string]os.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP}[s])
		}
	case "grandchild":
		pidFile, mode, _ := strings.Cut(arg, " ")
		cmd := exec.Command("sleep", "3600")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if mode == "pipe" {
			cmd.Stdout = os.Stdout
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "fake claude: %v\n", err)
			return 3, true
		}
		fakeWritePID(pidFile, cmd.Process.Pid)
	case "limit":
		secs, _ := strconv.Atoi(arg)
		reset := time.Now().Unix() + int64(secs)
		fakeEmitTo(out, map[string]any{"type": "rate_limit_event", "rate_limit_info": map[string]any{"status": "rejected", "resetsAt": reset, "rateLimitType": "five_hour"}})
		msg := "You've hit your session limit · resets soon"
		fakeEmitTo(out, map[string]any{"type": "assistant", "message": map[string]any{"model": "<synthetic>", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": msg}}}})
		r := fakeResult(true, msg)
		r["api_error_status"] = 429
		fakeEmitTo(out, r)
		flush()
	case "hang":
		flush()
		for { // not select{}: the runtime would call that a deadlock
			time.Sleep(time.Hour)
		}
	case "close-output":
		flush()
		os.Stdout.Close()
		if arg != "stdout" {
			os.Stderr.Close()
		}
	case "exit":
		n, _ := strconv.Atoi(arg)
		return n, true
	case "write-named":
		name, text, _ := strings.Cut(arg, " ")
		file := fakeNamedPath(name)
		if file == "" {
			fmt.Fprintf(os.Stderr, "fake claude: no path ending in /%s in the system prompt\n", name)
			return 3, true
		}
		os.WriteFile(file, []byte(strings.ReplaceAll(text, `\n`, "\n")), 0o644)
	case "ask":
		fmt.Fprintln(out, arg)
		flush()
		line, _ := fakeTerminal.ReadString('\n')
		os.Setenv("FAKE_ANSWER", strings.TrimRight(line, "\r\n"))
	case "on-int":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT)
		go func() {
			for range c {
				fmt.Fprintln(os.Stderr, arg)
			}
		}()
	case "suspend":
		flush()
		// Another thread may take the SIGSTOP and this one run on a little:
		// going on only once continued keeps later output after the stop.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGCONT)
		syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		<-c
		signal.Stop(c)
	case "stty-raw":
		t, err := getTermios(os.Stdin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fake claude: %v\n", err)
			return 3, true
		}
		t.Lflag &^= syscall.ICANON | syscall.ECHO
		setTermios(os.Stdin, t)
	default:
		fmt.Fprintf(os.Stderr, "fake claude: unknown directive %q\n", verb)
		return 3, true
	}
	return 0, false
}

// fakeHelp prints the fake's --help. With $FAKE_CLAUDE_HELP_LEAVE set it
// first leaves a sleeper holding its output open, its pid in that file (a
// --help that never ends its output).
func fakeHelp() int {
	if p := os.Getenv("FAKE_CLAUDE_HELP_LEAVE"); p != "" {
		sleeper := exec.Command("sleep", "3600")
		sleeper.Stdout, sleeper.Stderr = os.Stdout, os.Stderr
		if err := sleeper.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "fake claude: %v\n", err)
			return 1
		}
		os.WriteFile(p, []byte(strconv.Itoa(sleeper.Process.Pid)), 0o644)
	}
	if p := os.Getenv("FAKE_CLAUDE_HELP"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fake claude: %v\n", err)
			return 1
		}
		os.Stdout.Write(data)
		return 0
	}
	fmt.Print(`Usage: claude [options] [command] [prompt]

Options:
  --append-system-prompt <prompt>  Append a system prompt to the default system prompt
  --bare                           Minimal mode: only --system-prompt[-file],
                                   --append-system-prompt[-file] are read
  -p, --print                      Print response and exit
`)
	return 0
}

// fakeTerminal reads the lines the ask directive asks for.
var fakeTerminal = bufio.NewReader(os.Stdin)

// fakeHasArg reports whether the fake was given arg.
func fakeHasArg(arg string) bool {
	for _, a := range os.Args[1:] {
		if a == arg {
			return true
		}
	}
	return false
}

// fakeSystemPrompt returns the value of --append-system-prompt, or "".
func fakeSystemPrompt() string {
	for i := 1; i+1 < len(os.Args); i++ {
		if os.Args[i] == "--append-system-prompt" {
			return os.Args[i+1]
		}
	}
	return ""
}

// fakeNamedPath returns the first path ending in /name in the system
// prompt, or "".
func fakeNamedPath(name string) string {
	for _, word := range strings.Fields(fakeSystemPrompt()) {
		word = strings.TrimRight(strings.Trim(word, "`\"'()"), ".,:;")
		if strings.HasPrefix(word, "/") && strings.HasSuffix(word, "/"+name) {
			return word
		}
	}
	return ""
}

// fakeNextCall increments and returns the call counter kept in path.
func fakeNextCall(path string) int {
	data, _ := os.ReadFile(path)
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	n++
	os.WriteFile(path, []byte(strconv.Itoa(n)), 0o644)
	return n
}

// fakeCallMatches reports whether call is in the filter "N", "N-" or "N-M".
func fakeCallMatches(filter string, call int) bool {
	lo, hi, isRange := strings.Cut(filter, "-")
	from, err := strconv.Atoi(lo)
	if err != nil {
		return false
	}
	if !isRange {
		return call == from
	}
	if hi == "" {
		return call >= from
	}
	to, err := strconv.Atoi(hi)
	return err == nil && call >= from && call <= to
}

func fakeAssistantText(text string) map[string]any {
	return map[string]any{"type": "assistant", "message": map[string]any{
		"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}},
	}, "session_id": "fake"}
}

func fakeResult(isError bool, text string) map[string]any {
	return map[string]any{"type": "result", "subtype": "success", "is_error": isError, "result": text,
		"num_turns": 1, "total_cost_usd": 0.01, "duration_ms": 5, "session_id": "fake"}
}

func fakeEmit(v map[string]any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

func fakeEmitTo(w io.Writer, v map[string]any) {
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

// fakeTrapInt makes SIGINT end the fake as a CLI that cleans up: it says
// so on stderr (who names the fake), cleans up, touches script.cleaned,
// flushes out, prints the line last and exits with code.
func fakeTrapInt(who, script string, out *bufio.Writer, cleanup func(), last string, code int) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT)
	go func() {
		<-c
		fmt.Fprintf(os.Stderr, "%s: got SIGINT, cleaning up\n", who)
		os.WriteFile(script+".sigint", nil, 0o644) // a scenario can wait for it
		cleanup()
		os.WriteFile(script+".cleaned", nil, 0o644)
		out.Flush()
		os.Stdout.WriteString(last + "\n")
		os.Exit(code)
	}()
}

// fakeWritePID writes a pid file atomically: a test that sees the file sees
// the pid, even if the fake is killed right after.
func fakeWritePID(path string, pid int) {
	os.WriteFile(path+".tmp", []byte(strconv.Itoa(pid)), 0o644)
	os.Rename(path+".tmp", path)
}
