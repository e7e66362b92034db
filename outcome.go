package main

// This file decides what an iteration's result means: success, failure, a
// usage limit to wait for, or a fatal error that no retry can fix. The rules
// are: the outcome comes from the last result event, not from the exit
// status alone (the real CLI exits 0 after SIGINT, and 1 on results that
// carry is_error:true); without a result, the exit status and stderr say
// why; usage limits are read from the rate-limit event, the API status and
// the CLI's own limit text in the result or its synthetic error message,
// never from tool output.

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"time"
)

// iterationOutcome is what one iteration's agent did.
type iterationOutcome struct {
	result        *streamEvent // the last result event
	rateLimit     *rateLimitInfo
	syntheticText string // the CLI's own error message, if any
	// tools counts the tool calls the agent made, by tool name.
	tools     map[string]int
	malformed int
	skipped   int

	exitCode   int
	exitSignal string
	stderrTail string
	// stderrDenials are refused calls only the agent's stderr or session
	// file told (lateRefused).
	stderrDenials []permissionDenial
	// hang names the hang protection that ended the agent, if one did.
	hang string
	// interrupted is set when a signal ended the iteration.
	interrupted bool
	// costEstimated: the agent's cost is an estimate from tokens (codex),
	// with a result or without one (a timeout, a signal, an exit without
	// a result: an estimated $0), from its childSpec.
	costEstimated bool
	// elapsed is the iteration's duration, time suspended excluded.
	elapsed  time.Duration
	startErr error
}

// observe records what matters of e, and reports whether it is a result.
func (o *iterationOutcome) observe(e *streamEvent) (isResult bool) {
	switch e.Type {
	case "result":
		o.result = e
		return true
	case "rate_limit_event":
		if e.RateLimitInfo != nil && e.RateLimitInfo.Status == "rejected" {
			o.rateLimit = e.RateLimitInfo
		}
	case "assistant":
		for _, b := range e.Message.blocks() {
			if b.Type == "tool_use" {
				o.countTool(b.Name)
			}
		}
		if e.Message != nil && e.Message.Model == "<synthetic>" {
			for _, b := range e.Message.blocks() {
				if b.Type == "text" {
					o.syntheticText = b.Text
				}
			}
		}
	}
	return false
}

// maxToolsCounted bounds the tool names counted in one iteration (names are
// the agent's to choose); the rest count under otherTools.
const (
	maxToolsCounted = 64
	otherTools      = "(other)"
)

// countTool counts one call of the tool name.
func (o *iterationOutcome) countTool(name string) {
	name = clip(sanitizeString(firstNonEmpty(name, "(unnamed)")), 80)
	if o.tools == nil {
		o.tools = map[string]int{}
	}
	if _, ok := o.tools[name]; !ok && len(o.tools) >= maxToolsCounted {
		name = otherTools
	}
	o.tools[name]++
}

// finish records the process's exit.
func (o *iterationOutcome) finish(waitErr error, stderrTail string) {
	o.stderrTail = stderrTail
	o.exitCode, o.exitSignal = childExit(waitErr)
}

// failed reports whether the iteration is a failed one, and why.
func (o *iterationOutcome) failed() (bool, string) {
	switch {
	case o.startErr != nil:
		return true, o.startErr.Error()
	case o.hang != "":
		return true, o.hang
	case o.result == nil:
		why := "agent exited without a result"
		if o.exitSignal != "" {
			why = "agent " + o.exitSignal + " without a result"
		} else if o.exitCode != 0 {
			why = fmt.Sprintf("agent exited with status %d without a result", o.exitCode)
		}
		if cause := stderrCause(o.stderrTail); cause != "" {
			why += ": " + cause
		}
		return true, why
	case o.result.IsError || o.result.Subtype != "success":
		text := clip(errorMessageText(o.result.resultText()), 300) // errtext.go: an API's JSON body
		if text == "" {
			text = "an error result without text"
		}
		// The CLI says "success" on results that are errors (is_error
		// true): the subtype is named only when it says what went wrong.
		if o.result.Subtype == "" || o.result.Subtype == "success" {
			return true, text
		}
		return true, o.result.Subtype + ": " + text
	}
	return false, ""
}

// resultLabel is how a result event's outcome is shown: "success", "error",
// or the CLI's error subtype (error_max_turns, …).
func resultLabel(e *streamEvent) string {
	switch {
	case !e.IsError && e.Subtype == "success":
		return "success"
	case e.Subtype == "" || e.Subtype == "success":
		return "error"
	}
	return e.Subtype
}

// cost is the iteration's reported cost in USD.
func (o *iterationOutcome) cost() float64 {
	if o.result != nil && o.result.TotalCostUSD != nil {
		return *o.result.TotalCostUSD
	}
	return 0
}

// resultText is the final result's text ("" when there is none).
func (o *iterationOutcome) resultText() string {
	if o.result == nil || o.result.Result == nil {
		return ""
	}
	return *o.result.Result
}

// usageLimit reports whether the iteration hit a usage limit, and when it
// resets (zero when unknown). Only the result and the CLI's own error text
// are read, never tool output.
func (o *iterationOutcome) usageLimit(now time.Time) (bool, time.Time) {
	succeeded := o.result != nil && !o.result.IsError && o.result.Subtype == "success"
	if succeeded {
		return false, time.Time{}
	}
	var reset time.Time
	if o.rateLimit != nil && o.rateLimit.ResetsAt > 0 {
		reset = time.Unix(o.rateLimit.ResetsAt, 0)
	}
	texts := []string{o.syntheticText}
	if o.result != nil {
		texts = append(texts, o.result.resultText())
	}
	hit := o.rateLimit != nil || (o.result != nil && o.result.APIErrorStatus != nil && *o.result.APIErrorStatus == 429)
	for _, t := range texts {
		if !isLimitText(t) {
			continue
		}
		hit = true
		if reset.IsZero() {
			if r, ok := limitResetFromText(t, now); ok {
				reset = r
			}
		}
	}
	return hit, reset
}

// fatalError is an agent failure that no retry can fix.
type fatalError struct {
	msg, hint string
}

// fatal reports whether the outcome is a known fatal one.
func (o *iterationOutcome) fatal() *fatalError {
	texts := []string{o.syntheticText, o.stderrTail}
	if o.result != nil {
		texts = append(texts, o.result.resultText())
	}
	all := strings.Join(texts, "\n")
	switch {
	case o.startErr != nil && (errors.Is(o.startErr, syscall.ENOEXEC) || errors.Is(o.startErr, syscall.EACCES) || errors.Is(o.startErr, fs.ErrNotExist)):
		// Not a program (exec format error), not runnable, or gone: every
		// start fails alike (a busy text file or no memory may not).
		return &fatalError{"the agent cannot be started: " + o.startErr.Error(),
			"check the agent's program: claude-iterate config get claude.command (codex: agents.codex.command), --claude, $CLAUDE_ITERATE_CLAUDE"}
	case strings.Contains(all, "--dangerously-skip-permissions cannot be used with root"):
		return &fatalError{"claude refuses --dangerously-skip-permissions when run as root", "set IS_SANDBOX=1 only inside a sandbox (a container or VM), or run as a normal user"}
	case strings.Contains(all, "Not logged in"):
		return &fatalError{"claude is not logged in", "run claude once and /login, or set ANTHROPIC_API_KEY"}
	case strings.Contains(all, "Invalid API key"):
		return &fatalError{"claude reports an invalid API key", "check ANTHROPIC_API_KEY, or run claude and /login"}
	case strings.Contains(all, "requires --verbose"):
		return &fatalError{"claude rejected the stream-json options", "check claude.args for conflicting options; claude --version should be 1.0 or later"}
	case o.result == nil && o.exitCode != 0 && isUsageErrorLine(stderrCause(o.stderrTail)):
		return &fatalError{"the agent refused its command line: " + strings.TrimPrefix(stderrCause(o.stderrTail), "error: "),
			"the same arguments fail every time: check them with claude-iterate config get claude.args (codex: agents.codex.args)"}
	}
	return nil
}

// maxCauseBytes bounds the cause quoted from an agent's stderr.
const maxCauseBytes = 200

// stderrCause is what an agent's stderr says went wrong, for the reason of
// an iteration without a result: its last line of the form "error: …" (a
// command-line parser's, which then prints usage and tips), or else its
// last meaningful line — not blank, not a stack frame ("at …"), not the
// runtime's version ("Node.js v22") or a pointer to --help; escaped and
// clipped, "" when there is none.
func stderrCause(tail string) string {
	lines := strings.Split(tail, "\n")
	var last string
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "error: ") {
			last = l
			break
		}
		if last == "" && !noiseLine(l) {
			last = l
		}
	}
	return clip(sanitizeString(errorMessageText(last)), maxCauseBytes)
}

// noiseLine reports whether a (trimmed) stderr line says nothing of the
// cause.
func noiseLine(l string) bool {
	for _, p := range []string{"at ", "Node.js v", "For more information", "Usage:", "tip:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return l == "" || strings.Trim(l, "^~-= ") == ""
}

// usageErrorPrefixes are the command-line parsers' errors (claude's
// commander, codex's clap): the agent refuses its arguments, which no retry
// changes.
var usageErrorPrefixes = []string{
	"error: unknown option ", "error: option '", "error: too many arguments", "error: missing required argument",
	"error: unknown command", "error: unexpected argument ", "error: invalid value ", "error: unrecognized subcommand",
	"error: a value is required for ", "error: the argument '",
}

// isUsageErrorLine reports whether a cause is a command-line parser's error.
func isUsageErrorLine(cause string) bool {
	for _, p := range usageErrorPrefixes {
		if strings.HasPrefix(cause, p) {
			return true
		}
	}
	return false
}
