package main

// This file reads the agent's stdout: newline-delimited JSON events from
// `claude -p --output-format stream-json --verbose`, and formats them for the
// verbose display and the log.
//
// The rules are: lines have no length limit short of maxLineBytes (a longer
// line is skipped with a warning and reading goes on — the pipe is always
// drained, so the agent never blocks on a full pipe); malformed lines, unknown
// event types, missing fields, a last line without a newline and events after
// the result are tolerated, logged and never fatal; memory stays bounded: the
// reader holds the current line, the last result and a small tool-name map,
// never the transcript.
//
// The fields the tool relies on (all others are ignored):
//
//	every event      type, subtype, parent_tool_use_id (set inside a sub-agent)
//	system/init      model, tools
//	system/api_retry attempt, max_retries, error_status, error, retry_delay_ms
//	system/task_*    description, summary, status
//	assistant, user  message.content[]: {type:"text", text}
//	                 {type:"tool_use", id, name, input{file_path, command,
//	                 pattern, path, description, url, query, old_string,
//	                 new_string, content, offset, limit, todos}}
//	                 {type:"tool_result", tool_use_id, is_error, content:
//	                 string or [{type:"text", text}]}
//	                 message.model "<synthetic>" marks the CLI's own error text
//	rate_limit_event rate_limit_info{status:"allowed"|"rejected", resetsAt
//	                 (epoch seconds), rateLimitType}
//	result           subtype ("success", "error_max_turns",
//	                 "error_during_execution", …), is_error, result (text;
//	                 absent on some errors), errors[], total_cost_usd,
//	                 num_turns, api_error_status (e.g. 429)
//	stream_event     partial-message deltas: not shown (the assistant event
//	                 that follows carries the same text)

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxLineBytes caps one stream-json line. Public reports mention lines over
// 64 MiB (an Edit of a large file); past this, a line is skipped.
const maxLineBytes = 128 << 20

// lineReader splits a stream into lines of at most max bytes.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its newline. skipped > 0 reports a line
// of that many bytes that was over the cap and dropped (line is then nil).
// The returned slice is valid until the next call.
func (lr *lineReader) next() (line []byte, skipped int64, err error) {
	lr.buf = lr.buf[:0]
	over := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if over {
			skipped += int64(len(chunk))
		} else if len(lr.buf)+len(chunk) > lr.max+1 {
			over = true
			skipped = int64(len(lr.buf) + len(chunk))
			lr.buf = lr.buf[:0]
		} else {
			lr.buf = append(lr.buf, chunk...)
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			if over {
				return nil, skipped - 1, nil
			}
			return bytes.TrimSuffix(lr.buf[:len(lr.buf)-1], []byte{'\r'}), 0, nil
		default:
			// EOF or a read error: a last line without a newline still counts.
			if over {
				return nil, skipped, nil
			}
			if len(lr.buf) > 0 {
				return lr.buf, 0, nil
			}
			return nil, 0, err
		}
	}
}

// streamEvent is one stream-json event, reduced to the fields listed in the
// file comment.
type streamEvent struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         *streamMessage  `json:"message"`
	IsError         bool            `json:"is_error"`
	Result          *string         `json:"result"`
	Errors          json.RawMessage `json:"errors"`
	TotalCostUSD    *float64        `json:"total_cost_usd"`
	NumTurns        int             `json:"num_turns"`
	APIErrorStatus  *int            `json:"api_error_status"`
	RateLimitInfo   *rateLimitInfo  `json:"rate_limit_info"`
	Model           string          `json:"model"`
	Tools           []string        `json:"tools"`
	Attempt         int             `json:"attempt"`
	MaxRetries      int             `json:"max_retries"`
	ErrorStatus     *int            `json:"error_status"`
	Error           json.RawMessage `json:"error"`
	RetryDelayMS    float64         `json:"retry_delay_ms"`
	Description     string          `json:"description"`
	Summary         string          `json:"summary"`
	Status          string          `json:"status"`
}

type streamMessage struct {
	Model string `json:"model"`
	// Content is an array of blocks; a plain string (a user prompt) is
	// decoded as one text block by decodeEvent.
	Content []contentBlock `json:"content"`
}

type rateLimitInfo struct {
	Status        string `json:"status"`
	ResetsAt      int64  `json:"resetsAt"`
	RateLimitType string `json:"rateLimitType"`
}

// contentBlock is one element of message.content.
type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   toolContent     `json:"content"`
	IsError   bool            `json:"is_error"`
}

// toolContent is a tool result's content, reduced to what the display
// needs: its line count and the text of its first lines. Tool results are
// the huge part of a transcript (whole files, long command output), so the
// string is not decoded in full: only previewBytes of it are unquoted.
type toolContent struct {
	lines int    // number of lines, counted on the raw JSON
	text  string // the start of the text
}

// previewBytes bounds how much of a tool result is decoded.
const previewBytes = 32 << 10

// UnmarshalJSON implements json.Unmarshaler. data is a string or an array
// of text blocks (a sub-agent's result).
func (c *toolContent) UnmarshalJSON(data []byte) error {
	switch {
	case len(data) > 0 && data[0] == '"':
		raw := data[1 : len(data)-1]
		c.lines = bytes.Count(raw, []byte(`\n`)) + 1
		if trimmed := bytes.TrimSuffix(raw, []byte(`\n`)); len(trimmed) < len(raw) {
			c.lines-- // a final newline ends the last line
		}
		if len(raw) == 0 {
			c.lines = 0
		}
		if len(raw) > previewBytes {
			raw = raw[:previewBytes]
		}
		c.text = unquoteJSONPrefix(raw)
	case len(data) > 0 && data[0] == '[':
		var parts []contentBlock
		if err := json.Unmarshal(data, &parts); err != nil {
			return err
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
				b.WriteString("\n")
			} else {
				fmt.Fprintf(&b, "[%s]\n", p.Type)
			}
		}
		c.text = b.String()
		c.lines = strings.Count(strings.TrimRight(c.text, "\n"), "\n") + 1
		if c.text == "" {
			c.lines = 0
		}
	default:
		c.text = string(data)
		c.lines = 1
	}
	return nil
}

// unquoteJSONPrefix decodes the body of a JSON string that may be cut
// anywhere, even inside an escape; what cannot be decoded is dropped.
func unquoteJSONPrefix(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if i+1 >= len(raw) {
			break
		}
		i++
		switch raw[i] {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'u':
			if i+4 >= len(raw) {
				return string(b)
			}
			r := hex4(raw[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if d := utf16.DecodeRune(r, hex4(raw[i+3:i+7])); d != utf8.RuneError {
					r = d
					i += 6
				}
			}
			b = utf8.AppendRune(b, r)
		default: // '"', '\\', '/'
			b = append(b, raw[i])
		}
	}
	return string(b)
}

// blocks returns message.content.
func (m *streamMessage) blocks() []contentBlock {
	if m == nil {
		return nil
	}
	return m.Content
}

// resultText returns a result event's text, or its errors joined.
func (e *streamEvent) resultText() string {
	if e.Result != nil {
		return *e.Result
	}
	var errs []string
	if json.Unmarshal(e.Errors, &errs) == nil {
		return strings.Join(errs, "; ")
	}
	if len(e.Errors) > 0 && string(e.Errors) != "null" {
		return string(e.Errors)
	}
	return ""
}

// decodeEvent parses one line.
func decodeEvent(line []byte) (*streamEvent, error) {
	var e streamEvent
	if err := json.Unmarshal(line, &e); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) || te.Field != "message.content" {
			return nil, err
		}
		// message.content as a plain string: one text block.
		var alt struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal(line, &alt); err != nil {
			return nil, err
		}
		e.Message.Content = []contentBlock{{Type: "text", Text: alt.Message.Content}}
	}
	if e.Type == "" {
		return &e, fmt.Errorf("event without a type")
	}
	return &e, nil
}

// Preview sizes for tool results (SPEC §7).
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
}

func newFormatter(w io.Writer) *formatter {
	return &formatter{w: w, toolNames: map[string]string{}}
}

func (f *formatter) printf(indent, format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	for _, line := range strings.Split(s, "\n") {
		io.WriteString(f.w, indent+line+"\n")
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
		f.printf(indent, "%s Result (%s, %d turns%s): %s", mark, e.Subtype, e.NumTurns, cost, clip(e.resultText(), 2000))
	case "stream_event":
		// Partial deltas; the assistant event repeats their text.
	default:
		f.printf(indent, "[%s event] %s", e.Type, clip(string(raw), 300))
	}
}

func (f *formatter) formatSystem(e *streamEvent, indent string, raw []byte) {
	switch e.Subtype {
	case "init":
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
		f.printf(indent, "%s", b.Text)
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

// toolInput holds the tool arguments worth showing.
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

func (f *formatter) formatToolUse(b contentBlock, indent string) {
	var in toolInput
	json.Unmarshal(b.Input, &in)
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
		if in.Content != nil {
			size = fmt.Sprintf(" (%s, %d lines)", formatBytes(len(*in.Content)), strings.Count(*in.Content, "\n")+1)
		}
		f.printf(indent, "%s %s%s", head, in.FilePath, size)
	case "Edit":
		mode := ""
		if in.ReplaceAll {
			mode = " (replace all)"
		}
		f.printf(indent, "%s %s%s", head, in.FilePath, mode)
		if in.OldString != nil {
			f.printf(indent+"   - ", "%s", *in.OldString)
		}
		if in.NewString != nil {
			f.printf(indent+"   + ", "%s", *in.NewString)
		}
	case "NotebookEdit":
		f.printf(indent, "%s %s", head, firstNonEmpty(in.NotebookP, in.FilePath))
	case "Bash":
		f.printf(indent, "%s $ %s", head, clip(in.Command, 2000))
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
	case "Bash":
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

// hex4 decodes the four hex digits of a \\u escape (bad digits count as 0).
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// clip shortens s to about n bytes, on a rune boundary, saying how much was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func formatBytes(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}
