package main

// This file reads codex's stream: the JSON Lines of `codex exec --json`,
// turned into the tool's events (agentcli.go), so that the outcome, the
// record, the activity line and the transcript read codex as they read
// claude. The events (codex-rs/exec/src/exec_events.rs):
//
//	thread.started   thread_id                     → system init (session)
//	turn.started                                   → nothing
//	item.started     command_execution, mcp_tool_call, web_search
//	                                               → a tool_use block
//	item.completed   agent_message {text}          → assistant text (the
//	                                                 last is the result text)
//	                 reasoning {text}              → a thinking block
//	                 command_execution {command, aggregated_output,
//	                 exit_code, status}            → a tool_result (and its
//	                                                 tool_use, if not started)
//	                 file_change {changes[{path, kind}], status}
//	                                               → a tool_use and its result
//	                 mcp_tool_call, web_search     → a tool_result
//	                 error {message}               → a notice, not an end
//	turn.completed   usage {input_tokens, cached_input_tokens, output_tokens}
//	                                               → a success result, with
//	                                                 the estimated cost
//	turn.failed      error {message}               → an error result (none
//	                                                 when an error event just
//	                                                 said the same)
//	error            message                       → an error result;
//	                                                 "Reconnecting..." an API
//	                                                 retry
//
// Tool names, as the record's tools count them: command, file_change,
// mcp_tool_call, web_search. A refused call (a permission denial of the
// result): a command whose status is "declined", or one that failed with
// the words of a sandbox denial in its output ("Operation not permitted",
// "Read-only file system", ...: codex's own test, is_likely_sandbox_denied),
// and a file change that failed; a command refused so fast that codex
// gives it no item is found in its session file (codexrollout.go). A usage limit is the result's text
// ("You've hit your usage limit. ... try again at 3:28 PM."): limits.go.
//
// The cost is an estimate: (input − cached) × inputPerMTok + cached ×
// cachedInputPerMTok + output × outputPerMTok, per million tokens
// (agents.codex.pricing); codex's input_tokens include the cached ones.
// Memory is bounded as for claude: a string over maxStringBytes is
// clipped before it is decoded (clipLongStrings).

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// codexDecoder decodes one codex stream; it keeps what the result needs.
type codexDecoder struct {
	pricing  codexPricing
	lastText string
	started  map[string]bool // tool items started and not completed
	denials  []permissionDenial
	turns    int
	session  string
	// lastError is the last error event's message: the turn.failed that
	// repeats it makes no second result.
	lastError string
}

// codexEvent is one line of codex's stream, reduced to what the tool reads.
type codexEvent struct {
	Type     string        `json:"type"`
	ThreadID string        `json:"thread_id"`
	Usage    *codexUsage   `json:"usage"`
	Error    *codexMessage `json:"error"`
	Message  string        `json:"message"`
	Item     *codexItem    `json:"item"`
}

// codexMessage is an error's {"message": …}.
type codexMessage struct {
	Message string `json:"message"`
}

// codexChange is one file of a file_change item.
type codexChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// codexUsage is a turn's tokens.
type codexUsage struct {
	Input  int64 `json:"input_tokens"`
	Cached int64 `json:"cached_input_tokens"`
	Output int64 `json:"output_tokens"`
}

// codexItem is a thread item.
type codexItem struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	Text     string        `json:"text"`
	Command  string        `json:"command"`
	Output   codexOutput   `json:"aggregated_output"`
	ExitCode *int          `json:"exit_code"`
	Status   string        `json:"status"`
	Changes  []codexChange `json:"changes"`
	Server   string        `json:"server"`
	Tool     string        `json:"tool"`
	Query    string        `json:"query"`
	Message  string        `json:"message"`
	Error    *codexMessage `json:"error"`
}

// UnmarshalJSON implements json.Unmarshaler: a command's output is read as
// the fast path reads it (scanCodexOutputValue), never decoded whole.
func (o *codexOutput) UnmarshalJSON(data []byte) error {
	s := &jsonScanner{data: data}
	if !scanCodexOutputValue(s, o) || s.bad || !s.end() {
		return errors.New("aggregated_output: not a JSON string")
	}
	return nil
}

// Codex's tool names, as the record counts them.
const (
	codexToolCommand = "command"
	codexToolFile    = "file_change"
	codexToolMCP     = "mcp_tool_call"
	codexToolSearch  = "web_search"
)

// decode turns one line into events.
func (d *codexDecoder) decode(line []byte, emit func(*streamEvent)) error {
	ev, ok := decodeCodexFast(line)
	if !ok {
		short, _ := clipLongStrings(line)
		ev = &codexEvent{}
		if err := json.Unmarshal(short, ev); err != nil {
			return err
		}
	}
	if ev.Type == "" {
		return errors.New("event without a type")
	}
	switch ev.Type {
	case "thread.started":
		d.session = ev.ThreadID
		emit(&streamEvent{Type: "system", Subtype: "init", Model: "codex", sessionID: ev.ThreadID})
	case "turn.started":
		d.turns++
	case "item.started", "item.updated":
		if ev.Item != nil && ev.Type == "item.started" {
			d.itemStarted(ev.Item, emit)
		}
	case "item.completed":
		if ev.Item != nil {
			d.itemCompleted(ev.Item, emit)
		}
	case "turn.completed":
		r := d.result(false, d.lastText)
		if u := ev.Usage; u != nil {
			r.Usage = &tokenUsage{Input: u.Input, Output: u.Output, CacheRead: u.Cached}
			cost := d.pricing.estimate(u)
			r.TotalCostUSD = &cost
		}
		emit(r)
	case "turn.failed":
		msg := "turn failed"
		if ev.Error != nil && ev.Error.Message != "" {
			msg = errorMessageText(ev.Error.Message) // errtext.go: the API's JSON body
		}
		if msg != d.lastError { // the error event said it: one result
			emit(d.result(true, msg))
		}
	case "error":
		if strings.HasPrefix(ev.Message, "Reconnecting") {
			// "Reconnecting... 2/5 (stream disconnected ...)"
			e := &streamEvent{Type: "system", Subtype: "api_retry", Error: json.RawMessage(jsonQuote(errorMessageText(ev.Message)))}
			fmt.Sscanf(strings.TrimPrefix(ev.Message, "Reconnecting... "), "%d/%d", &e.Attempt, &e.MaxRetries)
			emit(e)
			return nil
		}
		d.lastError = firstNonEmpty(errorMessageText(ev.Message), "error")
		emit(d.result(true, d.lastError))
	default:
		// item.plan.delta, request_user_input, and what comes next:
		// shown in the transcript, never fatal.
		emit(&streamEvent{Type: "codex " + ev.Type})
	}
	return nil
}

// result is a result event; the usage and the cost are the caller's.
func (d *codexDecoder) result(isError bool, text string) *streamEvent {
	t := text
	e := &streamEvent{Type: "result", Subtype: "success", IsError: isError, Result: &t, NumTurns: max(d.turns, 1), sessionID: d.session, costEstimated: true}
	if isError {
		e.Subtype = ""
	}
	e.PermissionDenials = d.denials
	return e
}

// itemStarted shows a tool item's start.
func (d *codexDecoder) itemStarted(it *codexItem, emit func(*streamEvent)) {
	name, input, args := codexToolOf(it)
	if name == "" {
		return
	}
	if d.started == nil {
		d.started = map[string]bool{}
	}
	if len(d.started) < maxRunningTools {
		d.started[it.ID] = true
	}
	emit(toolUseEvent(it.ID, name, input, args))
}

// itemCompleted ends an item.
func (d *codexDecoder) itemCompleted(it *codexItem, emit func(*streamEvent)) {
	switch it.Type {
	case "agent_message":
		d.lastText = it.Text
		emit(&streamEvent{Type: "assistant", Message: &streamMessage{Content: []contentBlock{{Type: "text", Text: it.Text}}}})
		return
	case "reasoning":
		emit(&streamEvent{Type: "assistant", Message: &streamMessage{Content: []contentBlock{{Type: "thinking", Text: it.Text}}}})
		return
	case "error":
		emit(&streamEvent{Type: "system", Subtype: "codex_error", Summary: errorMessageText(firstNonEmpty(it.Message, it.Text))})
		return
	}
	name, input, args := codexToolOf(it)
	if name == "" {
		return // todo_list, plan: nothing the tool counts
	}
	if d.started[it.ID] {
		delete(d.started, it.ID)
	} else {
		emit(toolUseEvent(it.ID, name, input, args))
	}
	failed, c := codexItemEnd(it)
	if codexRefused(it) {
		d.denials = append(d.denials, permissionDenial{ToolName: name, ToolUseID: it.ID, ToolInput: input})
	}
	emit(&streamEvent{Type: "user", Message: &streamMessage{Content: []contentBlock{{Type: "tool_result", ToolUseID: it.ID, Content: c, IsError: failed}}}})
}

// toolUseEvent is an assistant event with one tool call.
func toolUseEvent(id, name string, input json.RawMessage, args *toolArgs) *streamEvent {
	return &streamEvent{Type: "assistant", Message: &streamMessage{Content: []contentBlock{{Type: "tool_use", ID: id, Name: name, Input: input, args: args}}}}
}

// codexToolOf names a tool item, with its input as the transcript and a
// refusal show it; "" for an item that is no tool call.
func codexToolOf(it *codexItem) (name string, input json.RawMessage, args *toolArgs) {
	switch it.Type {
	case "command_execution":
		cmd := codexCommandShown(it.Command) // codexcommand.go
		return codexToolCommand, jsonObject1("command", cmd), &toolArgs{Command: cmd}
	case "file_change":
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, c.Path)
		}
		p := strings.Join(paths, ", ")
		return codexToolFile, jsonObject1("path", p), &toolArgs{FilePath: p}
	case "mcp_tool_call":
		what := it.Server + "/" + it.Tool
		return codexToolMCP, jsonObject1("description", what), &toolArgs{Description: what}
	case "web_search":
		return codexToolSearch, jsonObject1("query", it.Query), &toolArgs{Query: it.Query}
	}
	return "", nil, nil
}

// codexItemEnd says whether a tool item failed, and its output as the
// transcript shows it (a command's: its start and its line count).
func codexItemEnd(it *codexItem) (failed bool, c toolContent) {
	text := ""
	switch it.Type {
	case "command_execution":
		failed = it.Status == "failed" || it.Status == "declined" || (it.ExitCode != nil && *it.ExitCode != 0)
		c = it.Output.content
		switch {
		case failed && it.ExitCode != nil:
			c.text = fmt.Sprintf("exit code %d\n%s", *it.ExitCode, c.text)
			c.lines++
		case it.Status == "declined":
			c.text = "declined: " + c.text
			c.lines = max(c.lines, 1)
		}
		return failed, c
	case "file_change":
		failed = it.Status == "failed"
		var b strings.Builder
		for _, ch := range it.Changes {
			fmt.Fprintf(&b, "%s %s\n", ch.Kind, ch.Path)
		}
		text = b.String()
	default:
		failed = it.Status == "failed"
		if it.Error != nil {
			text = it.Error.Message
		}
	}
	c.text = clip(text, previewBytes)
	if text != "" {
		c.lines = strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
	}
	return failed, c
}

// sandboxDeniedWords are what a command's output says when codex's sandbox
// refused it (codex-rs: is_likely_sandbox_denied).
// Each is written from its second letter on (or its distinctive tail:
// "-only file system"), so that "Read-only" and "read-only" both match
// without a case-folded copy of the output.
var sandboxDeniedWords = []string{"peration not permitted", "ermission denied", erofsWords, "eccomp", "andbox", "andlock", "ailed to write file"}

// erofsWords are those of "Read-only file system".
const erofsWords = "-only file system"

// codexRefused reports whether codex's sandbox or policy refused the item.
// A command that exited 0 is refused only when its output says "Read-only
// file system": a shell script goes on after a write the sandbox refused
// (echo x > f; ...), and EROFS is the sandbox's word for a write.
func codexRefused(it *codexItem) bool {
	switch it.Type {
	case "command_execution":
		if it.Status == "declined" {
			return true
		}
		if it.Status != "failed" && (it.ExitCode == nil || *it.ExitCode == 0) {
			return it.Output.says(erofsWords)
		}
		return it.Output.says(sandboxDeniedWords...)
	case "file_change":
		return it.Status == "failed" || it.Status == "declined"
	}
	return false
}

// codexPatchRejected is how codex's stderr tells a patch its sandbox
// rejected, which its stream does not ("ERROR codex_core::tools::router:
// error=patch rejected: writing is blocked by read-only sandbox; ...").
const codexPatchRejected = "error=patch rejected: "

// stderrRefusals are the patches codex's stderr says were rejected.
func (codexAgent) stderrRefusals(tail string) []permissionDenial {
	var ds []permissionDenial
	for _, line := range strings.Split(tail, "\n") {
		_, why, ok := strings.Cut(line, codexPatchRejected)
		if !ok {
			continue
		}
		why, _, _ = strings.Cut(why, ";")
		ds = append(ds, permissionDenial{ToolName: codexToolFile, ToolInput: jsonObject1("path", "(patch rejected: "+strings.TrimSpace(why)+")")})
		if len(ds) == maxToolsCounted {
			break
		}
	}
	return ds
}

// estimate is the cost of u at p's rates.
func (p codexPricing) estimate(u *codexUsage) float64 {
	cached := min(max(u.Cached, 0), max(u.Input, 0))
	fresh := max(u.Input, 0) - cached
	return (float64(fresh)*p.Input + float64(cached)*p.CachedInput + float64(max(u.Output, 0))*p.Output) / 1e6
}

// jsonObject1 is {"key": value} as JSON (key needs no escape).
func jsonObject1(key, value string) json.RawMessage {
	return append(append([]byte(`{"`+key+`":`), jsonQuote(value)...), '}')
}

// jsonQuote is s as a JSON string.
func jsonQuote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
