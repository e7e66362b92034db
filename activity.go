package main

// This file follows what the agent is doing now, from its decoded stream
// events: the tool that runs and its key argument (the command, the file,
// the pattern), "thinking" between calls, the CLI's API retries, the
// result. The rules are: it is fed the events decodeStream already decoded,
// never the raw stream; it keeps a bounded stack of the tool calls without
// a result (a sub-agent's calls nest inside its Task); the newest one is
// shown; every argument is sanitized, made relative to the project root
// and clipped, since it goes to the screen and to the state file.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Kinds of activity.
const (
	actStarting  = "starting"  // the agent started, nothing came yet
	actThinking  = "thinking"  // between tool calls
	actTool      = "tool"      // a tool runs
	actRetry     = "retry"     // the CLI retries an API call
	actLimit     = "limit"     // the CLI reported a usage limit
	actFinishing = "finishing" // the result came; the agent is exiting
	actTests     = "tests"     // the run's test command runs
)

// maxToolArg bounds a tool argument kept for display.
const maxToolArg = 200

// activity is what the agent is doing now; its text depends on the time
// (the durations and countdowns), so it is kept as facts.
type activity struct {
	Kind  string    `json:"kind,omitempty"`
	Tool  string    `json:"tool,omitempty"`
	Arg   string    `json:"arg,omitempty"`
	Since time.Time `json:"since"`
	// An API retry: attempt n of max, after status, next at RetryAt.
	Attempt     int       `json:"attempt,omitempty"`
	MaxRetries  int       `json:"maxRetries,omitempty"`
	ErrorStatus int       `json:"errorStatus,omitempty"`
	RetryAt     time.Time `json:"retryAt"`
	// Agent names the agent CLI while it starts and exits ("" is claude).
	Agent string `json:"agent,omitempty"`
}

// text shows the activity at now: "Bash: go test ./... · 42s".
func (a activity) text(now time.Time) string {
	since := ""
	if d := now.Sub(a.Since); !a.Since.IsZero() && d >= time.Second {
		since = " · " + compactDuration(d)
	}
	switch a.Kind {
	case actTool, actTests:
		s := a.Tool
		if a.Arg != "" {
			s += ": " + a.Arg
		}
		return s + since
	case actThinking:
		return "thinking" + since
	case actRetry:
		s := fmt.Sprintf("API retry %d/%d", a.Attempt, a.MaxRetries)
		if a.ErrorStatus != 0 {
			s += fmt.Sprintf(" after %d", a.ErrorStatus)
		}
		if left := a.RetryAt.Sub(now); left > 0 {
			return s + ", next in " + compactDuration(ceilSecond(left))
		}
		return s + ", retrying"
	case actLimit:
		return "usage limit reached"
	case actFinishing:
		return "result received; " + firstNonEmpty(a.Agent, agentClaude) + " is exiting" + since
	case actStarting:
		return "starting " + firstNonEmpty(a.Agent, agentClaude) + since
	}
	return ""
}

// shifted is a moved in time by d: the same activity, its timers resumed
// after d suspended.
func (a activity) shifted(d time.Duration) activity {
	if !a.Since.IsZero() {
		a.Since = a.Since.Add(d)
	}
	if !a.RetryAt.IsZero() {
		a.RetryAt = a.RetryAt.Add(d)
	}
	return a
}

// runningTool is a tool call without a result yet.
type runningTool struct {
	id, name, arg string
	since         time.Time
}

// maxRunningTools bounds the stack of tool calls without a result.
const maxRunningTools = 64

// activityTracker turns stream events into the current activity.
type activityTracker struct {
	root  string // the project root, to shorten paths
	agent string // the agent CLI of the iteration ("" is claude)
	tools []runningTool
	retry *activity // the last API retry, until the API answers
	last  activity
}

// shift moves the tracker's times by d, the time the run was suspended.
func (t *activityTracker) shift(d time.Duration) {
	for i := range t.tools {
		t.tools[i].since = t.tools[i].since.Add(d)
	}
	if t.retry != nil {
		r := t.retry.shifted(d)
		t.retry = &r
	}
	t.last = t.last.shifted(d)
}

// reset starts a new iteration.
func (t *activityTracker) reset(now time.Time) activity {
	t.tools, t.retry = t.tools[:0], nil
	t.last = activity{Kind: actStarting, Since: now, Agent: t.agent}
	return t.last
}

// observe takes one event and returns the activity after it.
func (t *activityTracker) observe(e *streamEvent, now time.Time) activity {
	switch e.Type {
	case "system":
		if e.Subtype == "api_retry" {
			a := activity{Kind: actRetry, Since: now, Attempt: e.Attempt, MaxRetries: e.MaxRetries,
				RetryAt: now.Add(time.Duration(e.RetryDelayMS * float64(time.Millisecond)))}
			if e.ErrorStatus != nil {
				a.ErrorStatus = *e.ErrorStatus
			}
			t.retry = &a
		} else if e.Subtype == "init" && t.last.Kind == actStarting {
			t.last = activity{Kind: actThinking, Since: now}
		}
	case "assistant", "user":
		t.retry = nil // the API answered
		changed := false
		for _, b := range e.Message.blocks() {
			switch b.Type {
			case "tool_use":
				if len(t.tools) >= maxRunningTools {
					t.tools = append(t.tools[:0], t.tools[1:]...)
				}
				t.tools = append(t.tools, runningTool{id: b.ID, name: sanitizeString(clipWidth(b.Name, 80)), arg: toolKeyArg(b.Name, b.toolArgs(), t.root), since: now})
				changed = true
			case "tool_result":
				for i := len(t.tools) - 1; i >= 0; i-- {
					if t.tools[i].id == b.ToolUseID {
						t.tools = append(t.tools[:i], t.tools[i+1:]...)
						changed = true
						break
					}
				}
			case "text", "thinking":
				changed = true
			}
		}
		if changed {
			t.settle(now)
		}
	case "rate_limit_event":
		if i := e.RateLimitInfo; i != nil && i.Status == "rejected" {
			t.last = activity{Kind: actLimit, Since: now}
		}
	case "result":
		t.tools, t.retry = t.tools[:0], nil
		t.last = activity{Kind: actFinishing, Since: now, Agent: t.agent}
	}
	if t.retry != nil {
		return *t.retry
	}
	return t.last
}

// settle shows the newest running tool, or thinking.
func (t *activityTracker) settle(now time.Time) {
	if n := len(t.tools); n > 0 {
		rt := t.tools[n-1]
		t.last = activity{Kind: actTool, Tool: rt.name, Arg: rt.arg, Since: rt.since}
		return
	}
	if t.last.Kind != actThinking {
		t.last = activity{Kind: actThinking, Since: now}
	}
}

// toolKeyArg is the argument that says what a tool call does: the file,
// the command, the pattern.
func toolKeyArg(name string, in *toolArgs, root string) string {
	var s string
	switch name {
	case "Read", "Write", "Edit", "MultiEdit", codexToolFile:
		s = shortPath(in.FilePath, root)
	case "NotebookEdit":
		s = shortPath(firstNonEmpty(in.NotebookPath, in.FilePath), root)
	case "Bash", codexToolCommand:
		s = in.Command
	case "Grep", "Glob":
		s = in.Pattern
		if in.Path != "" {
			s += " in " + shortPath(in.Path, root)
		}
	case "Task", "Agent", codexToolMCP:
		s = in.Description
	case "WebFetch":
		s = in.URL
	case "WebSearch", codexToolSearch:
		s = in.Query
	case "TodoWrite":
		var todos []json.RawMessage
		json.Unmarshal(in.Todos, &todos)
		s = fmt.Sprintf("%d items", len(todos))
	}
	// One line: a multi-line command shows as one.
	s = strings.Join(strings.Fields(s), " ")
	return sanitizeString(clipWidth(s, maxToolArg))
}

// shortPath shows path relative to root when it is inside it.
func shortPath(path, root string) string {
	if path == "" || root == "" || !filepath.IsAbs(path) {
		return path
	}
	if r, err := filepath.Rel(root, path); err == nil && r != "." && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// ceilSecond rounds d up to a whole second, for countdowns that reach 0s
// only when the time is up.
func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}
