package main

// This file decodes the agent's stdout: newline-delimited JSON events from
// `claude -p --output-format stream-json --verbose`. Formatting them for
// people is transcript.go's.
//
// The rules are: lines have no length limit short of maxLineBytes (a longer
// line is skipped with a warning and reading goes on — the pipe is always
// drained, so the agent never blocks on a full pipe); malformed lines, unknown
// event types, missing fields, a last line without a newline and events after
// the result are tolerated, logged and never fatal; memory stays bounded: the
// reader holds the current line, the last result and a small tool-name map,
// never the transcript, and a line the fast path decodes costs little more
// than itself, however long (strings over 1 MiB are kept clipped, see
// transcript.go). Lines are decoded by a one-pass fast path (streamfast.go)
// whose result is encoding/json's; what it is not sure of is decoded by
// encoding/json.
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
//	                 num_turns, api_error_status (e.g. 429),
//	                 permission_denials[]: {tool_name, tool_input},
//	                 usage: {input_tokens, output_tokens,
//	                 cache_read_input_tokens, cache_creation_input_tokens}
//	stream_event     partial-message deltas: not shown (the assistant event
//	                 that follows carries the same text)

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
)

// maxLineBytes caps one stream-json line; past this, a line is skipped as
// it streams. Public reports mention lines of tens of MiB (an Edit of a
// large file); the cap bounds the memory a line can take.
const maxLineBytes = 64 << 20

// lineDoublingLimit is how far a line buffer grows by doubling; a longer
// line gets a buffer of the whole cap at once. The OS backs a new buffer
// only as it is written, so that a line over the cap costs the cap at
// most, never the transient copies of a doubling buffer (which would hold
// one and a half times the cap). That buffer is released after its line
// and its memory returned to the OS.
const lineDoublingLimit = 4 << 20

// lineReader splits a stream into lines of at most max bytes.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// readBuffers keeps the read buffers of streams read to their end: a run
// reads a stream per iteration, and a new buffer each time would be 64 KiB
// to clear and then to collect.
var readBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

func newLineReader(r io.Reader, max int) *lineReader {
	br := readBuffers.Get().(*bufio.Reader)
	br.Reset(r)
	return &lineReader{r: br, max: max}
}

// close gives the read buffer back for another stream: no line lr
// returned may be used after it, nor lr.
func (lr *lineReader) close() {
	lr.r.Reset(nil)
	readBuffers.Put(lr.r)
	lr.r = nil
}

// next returns the next line without its newline. skipped > 0 reports a line
// of that many bytes that was over the cap and dropped (line is then nil).
// The returned slice is valid until the next call.
func (lr *lineReader) next() (line []byte, skipped int64, err error) {
	if cap(lr.buf) > lineDoublingLimit {
		lr.release()
	}
	lr.buf = lr.buf[:0]
	over := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		switch {
		case over:
			skipped += int64(len(chunk))
		case len(lr.buf)+len(chunk) > lr.max+1:
			over = true
			skipped = int64(len(lr.buf) + len(chunk))
			lr.release()
		case err == nil && len(lr.buf) == 0:
			// The whole line is in the reader's buffer: no copy.
			return bytes.TrimSuffix(chunk[:len(chunk)-1], []byte{'\r'}), 0, nil
		default:
			lr.grow(len(chunk))
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

// grow makes room for n more bytes in the line buffer.
func (lr *lineReader) grow(n int) {
	need := len(lr.buf) + n
	if need <= cap(lr.buf) {
		return
	}
	size := max(2*cap(lr.buf), need)
	if size > lineDoublingLimit || size > lr.max+1 {
		size = max(lr.max+1, need)
	}
	buf := make([]byte, len(lr.buf), size)
	copy(buf, lr.buf)
	lr.buf = buf
}

// release drops the line buffer; a big one's memory goes back to the OS at
// once, so that the next big line does not add its own.
func (lr *lineReader) release() {
	big := cap(lr.buf) > lineDoublingLimit
	lr.buf = nil
	if big {
		debug.FreeOSMemory()
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
	// PermissionDenials are the tool calls the CLI refused (result).
	PermissionDenials []permissionDenial `json:"permission_denials"`
	// Usage is the tokens the iteration used (result).
	Usage *tokenUsage `json:"usage"`

	// badField names a field of the wrong type, ignored (the others kept).
	badField string
	// sessionID and costEstimated are set by an adapter's decoder
	// (agentcli.go): the CLI's session, and a cost that is an estimate.
	sessionID     string
	costEstimated bool
}

type streamMessage struct {
	Model string `json:"model"`
	// Content is an array of blocks; a plain string (a user prompt) is
	// decoded as one text block by decodeEvent.
	Content []contentBlock `json:"content"`
}

// tokenUsage is a result's token counts.
type tokenUsage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
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

	// args is Input decoded by the fast path; nil when it was not.
	args *toolArgs
}

// toolContent is a tool result's content, reduced to what the display
// needs: its line count and the text of its first lines. Tool results are
// the huge part of a transcript (whole files, long command output), so the
// string is not decoded in full: only previewBytes of it are unquoted.
type toolContent struct {
	lines int    // number of lines, counted on the raw JSON
	text  string // the start of the text
}

// previewBytes bounds how much of a tool result is decoded: enough for the
// longest preview shown (previewBashLines lines of previewLineWidth bytes),
// and for an error's 2,000 bytes.
const previewBytes = 8 << 10

// UnmarshalJSON implements json.Unmarshaler. data is a string or an array
// of text blocks (a sub-agent's result).
func (c *toolContent) UnmarshalJSON(data []byte) error {
	switch {
	case len(data) > 0 && data[0] == '"':
		s := jsonScanner{data: data}
		raw, st := s.str()
		if !s.end() {
			return errors.New("tool result content: not a JSON string")
		}
		c.set(raw, st)
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

// set fills c from a string's raw body and the stats of its scan.
func (c *toolContent) set(raw []byte, st strStats) { c.setPrefix(raw, st, previewBytes) }

// setPrefix is set, decoding only about n bytes of the text.
func (c *toolContent) setPrefix(raw []byte, st strStats, n int) {
	c.lines = 0
	if len(raw) > 0 {
		c.lines = st.newlines + 1
		if st.lastNL {
			c.lines-- // a final newline ends the last line
		}
	}
	c.text = decodePrefix(raw, n)
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

// decodeEvent parses one line: by the fast path when it can, else with
// encoding/json.
func decodeEvent(line []byte) (*streamEvent, error) {
	if e, ok := decodeEventFast(line); ok {
		return e, nil
	}
	short, kept := clipLongStrings(line)
	return decodeEventKeeping(short, kept)
}

// clipLongStrings returns line with every string over maxStringBytes
// replaced by its clipped form (decodeClipped's), with the set of those
// forms, not to be clipped again; or line itself when it has none or is
// not valid JSON. encoding/json would decode such a string whole, a
// second (or third) copy of a line near the cap; clipped first, a line it
// decodes costs what one the fast path decodes costs. What is counted on
// a whole string (a tool result's or a Write's lines) is then counted on
// its first MiB.
func clipLongStrings(line []byte) ([]byte, map[string]bool) {
	if len(line) <= maxStringBytes {
		return line, nil
	}
	var kept map[string]bool
	var out []byte
	done := 0 // line[:done] is in out
	s := &jsonScanner{data: line}
	for {
		q := bytes.IndexByte(line[s.i:], '"')
		if q < 0 {
			break
		}
		s.i += q
		start := s.i
		raw, st := s.str()
		if s.bad {
			return line, nil
		}
		if len(raw) <= maxStringBytes {
			continue
		}
		if out == nil {
			out, kept = make([]byte, 0, 2*maxStringBytes), map[string]bool{}
		}
		clipped := decodeClipped(raw, st)
		kept[clipped] = true
		text, _ := json.Marshal(clipped)
		out = append(append(out, line[done:start]...), text...)
		done = s.i
	}
	if out == nil {
		return line, nil
	}
	return append(out, line[done:]...), kept
}

// decodeEventKeeping parses one line with encoding/json, the decoder of
// what the fast path hands back, for a line whose strings in kept are
// clipped already (clipLongStrings).
func decodeEventKeeping(line []byte, kept map[string]bool) (e *streamEvent, err error) {
	e, err = decodeEventJSON(line)
	if e != nil {
		clipStrings(reflect.ValueOf(e).Elem(), kept)
		for i := range e.Message.blocks() {
			b := &e.Message.Content[i]
			if len(b.Input) > maxStringBytes {
				b.args = decodeToolArgs(b.Input)
				b.Input = clipInput(b.Input, true)
			}
		}
	}
	return e, err
}

// clipInput returns a copy of a tool input's text, only its first
// maxStringBytes when decoded is set (its arguments are decoded already):
// an Edit of a big file must not cost its size twice. Only an unknown
// tool's display, clipped much shorter, reads it then.
func clipInput(raw []byte, decoded bool) json.RawMessage {
	if decoded && len(raw) > maxStringBytes {
		raw = raw[:maxStringBytes]
	}
	return bytes.Clone(raw)
}

// decodeEventJSON is decodeEventKeeping before its strings are clipped.
func decodeEventJSON(line []byte) (*streamEvent, error) {
	var e streamEvent
	if err := json.Unmarshal(line, &e); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return nil, err
		}
		if te.Field != "message.content" {
			// Unmarshal fills every other field before it reports a
			// field of the wrong type: one odd field must not turn a
			// whole result (a success) into a dropped line.
			e.badField = te.Field
			if e.Type == "" {
				return &e, fmt.Errorf("event without a type")
			}
			return &e, nil
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
