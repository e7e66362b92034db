package main

// This file handles the tool calls the agent's CLI refused. Without a
// permission flag, claude -p asks before it writes a file or runs a
// command, nobody can answer, and the call is refused: the result event
// lists the refusals in permission_denials. The rules are: every iteration
// with refusals says so at the default level, naming the refused calls
// (tool and file or command, the list clipped), and logs them all; the fix
// is shown once per run (iteration.go); an iteration with refusals that made no progress
// (no higher progress.completed, no worked:true, not complete) is a failed
// iteration, so that --max-failures ends a run that can do nothing.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// permissionDenial is one refused tool call of a result event.
type permissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// maxDenialsShown bounds the refused calls named on one line.
const maxDenialsShown = 5

// refusedHint tells how to let the agent use its tools.
const refusedHint = `claude asks before it writes files or runs commands, and in -p mode nobody can answer: ` +
	`allow the tools with --permission-mode acceptEdits or --allowed-tools Write,Edit,Bash ` +
	`(to keep them: claude-iterate config set claude.permissionMode acceptEdits), ` +
	`or run with --dangerously-skip-permissions (only inside a sandbox)`

// denials returns the tool calls the iteration's CLI refused: its
// result's, and those only its stderr or session told (lateRefused).
func (o *iterationOutcome) denials() []permissionDenial {
	if o.result == nil {
		return o.stderrDenials
	}
	if len(o.stderrDenials) > 0 {
		return append(o.result.PermissionDenials[:len(o.result.PermissionDenials):len(o.result.PermissionDenials)], o.stderrDenials...)
	}
	return o.result.PermissionDenials
}

// lateRefused judges, once the agent has ended, the refusals its stream
// did not show: those its stderr tells (spec's stderrRefusals) and those
// its session file does (sessionRefusals, which may also find that none
// is a refusal; each one it adds is also a call of its tool).
func (o *iterationOutcome) lateRefused(spec childSpec) {
	if spec.stderrRefusals != nil {
		o.stderrDenials = spec.stderrRefusals(o.stderrTail)
	}
	if spec.sessionRefusals == nil || o.result == nil {
		return
	}
	refused, more := spec.sessionRefusals(spec.args, spec.env, o.result.sessionID, o.denials())
	for _, d := range refused[len(refused)-more:] {
		if o.tools == nil {
			o.tools = map[string]int{}
		}
		o.tools[d.ToolName]++
	}
	o.result.PermissionDenials, o.stderrDenials = refused, nil
}

// describeDenial names a refused call: the tool and its key argument
// (a path relative to root when inside it, or the command, quoted).
func describeDenial(d permissionDenial, root string) string {
	name := firstNonEmpty(d.ToolName, "a tool")
	var in map[string]any
	if json.Unmarshal(d.ToolInput, &in) != nil {
		return name
	}
	str := func(k string) string {
		s, _ := in[k].(string)
		return strings.Join(strings.Fields(s), " ")
	}
	if c := str("command"); c != "" {
		return fmt.Sprintf("%s %q", name, clip(c, 60))
	}
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if p := str(k); p != "" {
			return name + " " + clip(relPath(root, p), 80)
		}
	}
	for _, k := range []string{"pattern", "url", "query"} {
		if v := str(k); v != "" {
			return fmt.Sprintf("%s %q", name, clip(v, 60))
		}
	}
	return name
}

// describeDenials names each refused call, as describeDenial does.
func describeDenials(ds []permissionDenial, root string) []string {
	var names []string
	for _, d := range ds {
		names = append(names, describeDenial(d, root))
	}
	return names
}

// denialSummary is "3 tool calls refused: Write a.go, Bash "npm test", …",
// naming at most max of the refused calls.
func denialSummary(names []string, max int) string {
	shown := names
	if len(names) > max {
		shown = append(names[:max:max], fmt.Sprintf("and %d more", len(names)-max))
	}
	return fmt.Sprintf("%s refused: %s", plural(len(names), "tool call"), strings.Join(shown, ", "))
}
