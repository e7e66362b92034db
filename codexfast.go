package main

// This file is the fast path of codex's stream reader (codexstream.go): one
// pass over a line with the stream-json scanner (jsonscan.go) that decodes
// the fields codexEvent lists and skips the rest, a command's output
// included, which is measured (its lines) and decoded only as far as the
// transcript shows it (previewBytes), never copied whole. The rules are
// streamfast.go's: what it is not sure of (a malformed line, a field of an
// unexpected type, a key twice or in another case, an escaped key, deep
// nesting) it hands back, and the line is decoded with encoding/json; the
// two give the same codexEvent (FuzzCodexFast checks it).

import "bytes"

// codexOutput is a command's aggregated_output as the reader keeps it: its
// start and line count (toolContent), and its raw JSON text, which is valid
// only while its line is decoded (codexRefused reads it then).
type codexOutput struct {
	content toolContent
	raw     []byte
}

// says reports whether the output's raw text holds one of words (no word
// has a character JSON escapes).
func (o *codexOutput) says(words ...string) bool {
	for _, w := range words {
		if bytes.Contains(o.raw, []byte(w)) {
			return true
		}
	}
	return false
}

// commandPreviewCut is how much of a command's output (raw JSON text) to
// decode: what the transcript shows of it, its first previewBashLines lines
// or 2,000 bytes (a failure's), at most previewBytes; the rest is only
// measured.
func commandPreviewCut(raw []byte) int {
	n, at := 0, 0
	for n <= previewBashLines {
		i := bytes.Index(raw[at:], []byte(`\n`))
		if i < 0 {
			return previewBytes
		}
		at += i + 2
		n++
	}
	return min(previewBytes, max(at, 2000))
}

// codexEventKeys, codexItemKeys: the keys of codexEvent and codexItem, as
// encoding/json matches them.
var (
	codexEventKeys = []string{"type", "thread_id", "usage", "error", "message", "item"}
	codexItemKeys  = []string{"id", "type", "text", "command", "aggregated_output", "exit_code", "status", "changes", "server", "tool", "query", "message", "error"}
	codexUsageKeys = []string{"input_tokens", "cached_input_tokens", "output_tokens"}
	codexMsgKeys   = []string{"message"}
	codexPathKeys  = []string{"path", "kind"}
)

// decodeCodexFast decodes line, or reports that encoding/json must.
func decodeCodexFast(line []byte) (*codexEvent, bool) {
	s := &jsonScanner{data: line}
	isNull, ok := s.objectStart()
	if !ok || isNull {
		return nil, false
	}
	ev := &codexEvent{}
	good := s.fields(false, codexEventKeys, func(k string) bool {
		switch k {
		case "type":
			return s.strValue(&ev.Type)
		case "thread_id":
			return s.strValue(&ev.ThreadID)
		case "message":
			return s.strValue(&ev.Message)
		case "usage":
			return scanPtr(s, &ev.Usage, func(u *codexUsage) bool { return scanCodexUsage(s, u) })
		case "error":
			return scanPtr(s, &ev.Error, func(m *codexMessage) bool { return scanCodexMessage(s, m) })
		case "item":
			return scanPtr(s, &ev.Item, func(it *codexItem) bool { return scanCodexItem(s, it) })
		}
		s.skip()
		return true
	})
	if !good || s.bad || !s.end() {
		return nil, false
	}
	return ev, true
}

// scanCodexUsage reads a usage object.
func scanCodexUsage(s *jsonScanner, u *codexUsage) bool {
	return s.object(codexUsageKeys, func(k string) bool {
		switch k {
		case "input_tokens":
			return s.intValue(&u.Input, 64)
		case "cached_input_tokens":
			return s.intValue(&u.Cached, 64)
		case "output_tokens":
			return s.intValue(&u.Output, 64)
		}
		s.skip()
		return true
	})
}

// scanCodexMessage reads an {"message": …} object.
func scanCodexMessage(s *jsonScanner, m *codexMessage) bool {
	return s.object(codexMsgKeys, func(k string) bool {
		if k == "message" {
			return s.strValue(&m.Message)
		}
		s.skip()
		return true
	})
}

// scanCodexItem reads a thread item.
func scanCodexItem(s *jsonScanner, it *codexItem) bool {
	return s.object(codexItemKeys, func(k string) bool {
		switch k {
		case "id":
			return s.strValue(&it.ID)
		case "type":
			return s.strValue(&it.Type)
		case "text":
			return s.strValue(&it.Text)
		case "command":
			return s.strValue(&it.Command)
		case "aggregated_output":
			return scanCodexOutputValue(s, &it.Output)
		case "exit_code":
			return scanPtr(s, &it.ExitCode, s.intField)
		case "status":
			return s.strValue(&it.Status)
		case "changes":
			return scanList(s, &it.Changes, func(c *codexChange) bool { return scanCodexChange(s, c) })
		case "server":
			return s.strValue(&it.Server)
		case "tool":
			return s.strValue(&it.Tool)
		case "query":
			return s.strValue(&it.Query)
		case "message":
			return s.strValue(&it.Message)
		case "error":
			return scanPtr(s, &it.Error, func(m *codexMessage) bool { return scanCodexMessage(s, m) })
		}
		s.skip()
		return true
	})
}

// scanCodexOutputValue reads aggregated_output without decoding it whole.
func scanCodexOutputValue(s *jsonScanner, o *codexOutput) bool {
	if s.peek() != '"' {
		return s.nullOrOther()
	}
	raw, st := s.str()
	if s.bad {
		return true
	}
	*o = codexOutput{raw: raw}
	o.content.setPrefix(raw, st, commandPreviewCut(raw))
	return true
}

// scanCodexChange reads one file change.
func scanCodexChange(s *jsonScanner, c *codexChange) bool {
	return s.object(codexPathKeys, func(k string) bool {
		switch k {
		case "path":
			return s.strValue(&c.Path)
		case "kind":
			return s.strValue(&c.Kind)
		}
		s.skip()
		return true
	})
}
