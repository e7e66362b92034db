package main

// This file formats the agent's stream-json events for people: the verbose
// display and the log. The rules are: the agent's text is shown as it is;
// a tool call shows its name and its key argument (file path, command,
// pattern); a tool result shows ✓ or ✗ with a bounded preview (Read 15
// lines, Bash 20 lines, Edit's old and new strings in full); a string over
// 1 MiB (maxStringBytes) is decoded, and so shown, clipped: its first MiB
// and the count of the bytes left out, so that a line near the line cap
// costs its size once, not three times; unknown tools
// and event types are shown generically, never dropped silently; partial
// message deltas are not shown (the assistant event that follows carries
// the same text); inside a sub-agent, lines are indented.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Preview sizes for tool results: enough to see what a tool did, bounded
// so that a 1 MiB result never floods the screen.
const (
	previewReadLines  = 15
	previewBashLines  = 20
	previewOtherLines = 10
	previewLineWidth  = 400
	maxToolNames      = 4096
)

// formatter turns events into the human-readable transcript shown in verbose
// mode and written to the log.
type formatter struct {
	w io.Writer
	// toolNames maps tool_use ids to tool names, to format their results.
	toolNames map[string]string
	// lastText is the agent's last text shown at the top level, which the
	// result repeats.
	lastText string
}

func newFormatter(w io.Writer) *formatter {
	return &formatter{w: w, toolNames: map[string]string{}}
}

func (f *formatter) printf(indent, format string, args ...any) {
	f.lines(indent, fmt.Sprintf(format, args...))
}

// bigLine is the length from which a line is written in pieces rather
// than copied into one string with its indent and newline.
const bigLine = 64 << 10

// lines writes s, each of its lines after indent. A long text (the agent's
// message, an Edit's strings) is written as it is, never copied whole: a
// line near the line cap must not cost its size again.
func (f *formatter) lines(indent, s string) {
	for {
		line, rest, more := strings.Cut(s, "\n")
		if len(line) < bigLine {
			io.WriteString(f.w, indent+line+"\n")
		} else {
			// The newline goes with the line's last byte, so that the
			// screen's sanitizer still sees a CRLF as one.
			io.WriteString(f.w, indent)
			io.WriteString(f.w, line[:len(line)-1])
			io.WriteString(f.w, line[len(line)-1:]+"\n")
		}
		if !more {
			return
		}
		s = rest
	}
}

// format writes e. raw is the event's line, used for unknown events.
func (f *formatter) format(e *streamEvent, raw []byte) {
	indent := ""
	if e.ParentToolUseID != nil && *e.ParentToolUseID != "" {
		indent = "  │ " // inside a sub-agent
	}
	switch e.Type {
	case "system":
		f.formatSystem(e, indent, raw)
	case "assistant", "user":
		for _, b := range e.Message.blocks() {
			f.formatBlock(e, b, indent)
		}
	case "rate_limit_event":
		if i := e.RateLimitInfo; i != nil && i.Status != "allowed" {
			f.printf(indent, "⚠ Rate limit %s (%s), resets at %s", i.Status, i.RateLimitType, formatEpoch(i.ResetsAt))
		}
	case "result":
		cost := ""
		if e.TotalCostUSD != nil {
			cost = fmt.Sprintf(", $%.4f", *e.TotalCostUSD)
		}
		mark := "✓"
		if e.IsError || e.Subtype != "success" {
			mark = "✗"
		}
		text := e.resultText()
		if text != "" && text == f.lastText {
			// The final text was just shown as the agent's message.
			f.printf(indent, "%s Result (%s, %s%s)", mark, resultLabel(e), plural(e.NumTurns, "turn"), cost)
			break
		}
		f.printf(indent, "%s Result (%s, %s%s): %s", mark, resultLabel(e), plural(e.NumTurns, "turn"), cost, clip(text, 2000))
	case "stream_event":
		// Partial deltas; the assistant event repeats their text.
	default:
		f.printf(indent, "[%s event] %s", e.Type, clip(string(raw), 300))
	}
}

func (f *formatter) formatSystem(e *streamEvent, indent string, raw []byte) {
	switch e.Subtype {
	case "init":
		if e.sessionID != "" { // an adapter's (codex: its thread)
			f.printf(indent, "Session started (%s, session %s)", e.Model, e.sessionID)
			break
		}
		f.printf(indent, "Session started (model %s, %d tools)", e.Model, len(e.Tools))
	case "api_retry":
		status := ""
		if e.ErrorStatus != nil {
			status = fmt.Sprintf(" after %d", *e.ErrorStatus)
		}
		f.printf(indent, "⚠ API retry %d/%d%s %s (waiting %.1fs)", e.Attempt, e.MaxRetries, status, strings.Trim(string(e.Error), `"`), e.RetryDelayMS/1000)
	case "task_started":
		f.printf(indent, "… Task started: %s", e.Description)
	case "task_notification", "task_updated":
		f.printf(indent, "… Task %s: %s", e.Status, firstNonEmpty(e.Summary, e.Description))
	case "codex_error":
		// An error item of codex's (a failed step, the turn goes on): its
		// message, an API body reduced to its own (errtext.go).
		f.printf(indent, "⚠ Error: %s", clip(e.Summary, 2000))
	case "status":
		// Request-state chatter ("requesting"); shown only in the log.
		f.printf(indent, "[status %s]", e.Status)
	default:
		f.printf(indent, "[system %s] %s", e.Subtype, clip(string(raw), 300))
	}
}

func (f *formatter) formatBlock(e *streamEvent, b contentBlock, indent string) {
	switch b.Type {
	case "text":
		if strings.TrimSpace(b.Text) == "" {
			return
		}
		if e.Type == "user" {
			f.printf(indent, "› %s", clip(b.Text, 2000))
			return
		}
		f.lines(indent, b.Text)
		if indent == "" {
			f.lastText = b.Text
		}
	case "thinking":
		// Not shown: long and private to the model's reasoning.
	case "tool_use":
		if len(f.toolNames) >= maxToolNames {
			clear(f.toolNames)
		}
		f.toolNames[b.ID] = b.Name
		f.formatToolUse(b, indent)
	case "tool_result":
		f.formatToolResult(b, indent)
	default:
		f.printf(indent, "[%s block]", b.Type)
	}
}

// toolArgs are the tool arguments worth showing. A Write's content is
// shown as its size, so only that is kept.
type toolArgs struct {
	FilePath, NotebookPath, Command, Pattern, Path string
	Description, Subagent, URL, Query              string
	OldString, NewString                           *string
	ReplaceAll                                     bool
	HasContent                                     bool
	ContentBytes, ContentLines, Offset, Limit      int
	Todos                                          []byte
}

// decodeToolArgs decodes a tool input with encoding/json, where the fast
// path did not.
func decodeToolArgs(input []byte) *toolArgs {
	var in toolInput
	json.Unmarshal(input, &in)
	a := &toolArgs{FilePath: in.FilePath, NotebookPath: in.NotebookP, Command: in.Command, Pattern: in.Pattern, Path: in.Path,
		Description: in.Description, Subagent: in.Subagent, URL: in.URL, Query: in.Query,
		OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll, Offset: in.Offset, Limit: in.Limit, Todos: in.Todos}
	if in.Content != nil {
		a.HasContent, a.ContentBytes, a.ContentLines = true, len(*in.Content), strings.Count(*in.Content, "\n")+1
	}
	clipStrings(reflect.ValueOf(a).Elem(), nil)
	return a
}

// clipStrings clips, as the fast decoder does (decodeClipped), every
// string encoding/json decoded into v: the fields, pointed-to values and
// slice elements it can set, except those in kept (clipped already).
func clipStrings(v reflect.Value, kept map[string]bool) {
	switch v.Kind() {
	case reflect.String:
		if v.Len() > maxStringBytes && v.CanSet() && !kept[v.String()] {
			v.SetString(clip(v.String(), maxStringBytes))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			clipStrings(v.Elem(), kept)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				clipStrings(v.Index(i), kept)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				clipStrings(v.Field(i), kept)
			}
		}
	}
}

// toolInput is the encoding/json form of toolArgs.
type toolInput struct {
	FilePath    string          `json:"file_path"`
	NotebookP   string          `json:"notebook_path"`
	Command     string          `json:"command"`
	Pattern     string          `json:"pattern"`
	Path        string          `json:"path"`
	Description string          `json:"description"`
	Subagent    string          `json:"subagent_type"`
	URL         string          `json:"url"`
	Query       string          `json:"query"`
	OldString   *string         `json:"old_string"`
	NewString   *string         `json:"new_string"`
	ReplaceAll  bool            `json:"replace_all"`
	Content     *string         `json:"content"`
	Offset      int             `json:"offset"`
	Limit       int             `json:"limit"`
	Todos       json.RawMessage `json:"todos"`
}

// toolArgs returns a tool_use block's arguments: the fast decoder's, or
// decoded with encoding/json.
func (b *contentBlock) toolArgs() *toolArgs {
	if b.args == nil {
		b.args = decodeToolArgs(b.Input)
	}
	return b.args
}

func (f *formatter) formatToolUse(b contentBlock, indent string) {
	in := b.toolArgs()
	head := "🔧 " + b.Name
	switch b.Name {
	case "Read":
		rng := ""
		if in.Offset > 0 || in.Limit > 0 {
			rng = fmt.Sprintf(" (from line %d, %d lines)", max(in.Offset, 1), in.Limit)
		}
		f.printf(indent, "%s %s%s", head, in.FilePath, rng)
	case "Write":
		size := ""
		if in.HasContent {
			size = fmt.Sprintf(" (%s, %d lines)", formatBytes(in.ContentBytes), in.ContentLines)
		}
		f.printf(indent, "%s %s%s", head, in.FilePath, size)
	case "Edit":
		mode := ""
		if in.ReplaceAll {
			mode = " (replace all)"
		}
		f.printf(indent, "%s %s%s", head, in.FilePath, mode)
		if in.OldString != nil {
			f.lines(indent+"   - ", *in.OldString)
		}
		if in.NewString != nil {
			f.lines(indent+"   + ", *in.NewString)
		}
	case "NotebookEdit":
		f.printf(indent, "%s %s", head, firstNonEmpty(in.NotebookPath, in.FilePath))
	case "Bash", codexToolCommand:
		f.printf(indent, "%s $ %s", head, clip(in.Command, 2000))
	case codexToolFile:
		f.printf(indent, "%s %s", head, in.FilePath)
	case "Grep", "Glob":
		where := ""
		if in.Path != "" {
			where = " in " + in.Path
		}
		f.printf(indent, "%s %s%s", head, in.Pattern, where)
	case "Task", "Agent":
		f.printf(indent, "%s %s (%s)", head, in.Description, firstNonEmpty(in.Subagent, "agent"))
	case "WebFetch":
		f.printf(indent, "%s %s", head, in.URL)
	case "WebSearch":
		f.printf(indent, "%s %s", head, in.Query)
	case "TodoWrite":
		var todos []struct{ Content, Status string }
		json.Unmarshal(in.Todos, &todos)
		f.printf(indent, "%s (%d items)", head, len(todos))
		for _, t := range todos {
			box := "[ ]"
			switch t.Status {
			case "completed":
				box = "[x]"
			case "in_progress":
				box = "[~]"
			}
			f.printf(indent+"   ", "%s %s", box, t.Content)
		}
	default:
		f.printf(indent, "%s %s", head, clip(compactJSON(b.Input), 300))
	}
}

func (f *formatter) formatToolResult(b contentBlock, indent string) {
	name := f.toolNames[b.ToolUseID]
	delete(f.toolNames, b.ToolUseID)
	text := b.Content.text
	if b.IsError {
		f.printf(indent, "   ✗ %s", clip(strings.TrimSpace(text), 2000))
		return
	}
	limit := previewOtherLines
	switch name {
	case "Read":
		limit = previewReadLines
	case "Bash", codexToolCommand:
		limit = previewBashLines
	}
	total := b.Content.lines
	f.printf(indent, "   ✓ %s", resultSummary(name, total))
	for i := 0; i < limit && i < total && text != ""; i++ {
		line, rest, _ := strings.Cut(text, "\n")
		f.printf(indent, "     %s", clip(line, previewLineWidth))
		text = rest
	}
	if total > limit {
		f.printf(indent, "     … %d more lines", total-limit)
	}
}

func resultSummary(tool string, lines int) string {
	if tool == "" {
		tool = "tool"
	}
	switch lines {
	case 0:
		return tool + ": no output"
	case 1:
		return tool + ": 1 line"
	}
	return fmt.Sprintf("%s: %d lines", tool, lines)
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
