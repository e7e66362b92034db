package main

// This file is the fast path of decodeEvent: one pass over a stream-json
// line that decodes only the fields listed in streamjson.go's comment and
// skips the rest, tool results' big strings included, without copying
// them. The rules are: its result is the one encoding/json gives, field for
// field (FuzzDecodeEventFast checks it); whatever it is not sure of — a
// malformed line, a field of an unexpected type, a key written in another
// case or twice, an escaped key, deep nesting — it hands back, and
// decodeEvent decodes the line with encoding/json instead. Tool inputs are
// decoded here, once, into the arguments the transcript shows.

import (
	"bytes"
	"strings"
)

// decodeEventFast decodes line, or reports that encoding/json must. Like
// encoding/json's, its event shares no memory with line.
func decodeEventFast(line []byte) (*streamEvent, bool) {
	s := &jsonScanner{data: line}
	if s.peek() != '{' {
		return nil, false
	}
	e := &streamEvent{}
	s.enter('{')
	var seen keySet
	for n := 0; s.more('}', &n); {
		k := s.key()
		if s.bad || !seen.add(k, eventKeys) {
			return nil, false
		}
		if !s.eventField(e, k) {
			return nil, false
		}
	}
	if !s.end() || e.Type == "" {
		return nil, false
	}
	return e, true
}

// eventKeys are the keys of streamEvent, as encoding/json matches them.
var eventKeys = []string{"type", "subtype", "parent_tool_use_id", "message", "is_error", "result", "errors", "total_cost_usd", "num_turns", "api_error_status", "rate_limit_info", "model", "tools", "attempt", "max_retries", "error_status", "error", "retry_delay_ms", "description", "summary", "status", "permission_denials", "usage"}

// eventField reads the value of key k into e, reporting false for a value
// of an unexpected type.
func (s *jsonScanner) eventField(e *streamEvent, k []byte) bool {
	switch string(k) {
	case "type":
		return s.strValue(&e.Type)
	case "subtype":
		return s.strValue(&e.Subtype)
	case "parent_tool_use_id":
		return s.strPtr(&e.ParentToolUseID)
	case "message":
		return s.message(&e.Message)
	case "is_error":
		return s.boolValue(&e.IsError)
	case "result":
		return s.strPtr(&e.Result)
	case "errors":
		e.Errors = bytes.Clone(s.raw())
	case "total_cost_usd":
		return s.floatPtr(&e.TotalCostUSD)
	case "num_turns":
		return s.intField(&e.NumTurns)
	case "api_error_status":
		return s.intPtr(&e.APIErrorStatus)
	case "rate_limit_info":
		return s.rateLimit(&e.RateLimitInfo)
	case "model":
		return s.strValue(&e.Model)
	case "tools":
		return s.stringList(&e.Tools)
	case "attempt":
		return s.intField(&e.Attempt)
	case "max_retries":
		return s.intField(&e.MaxRetries)
	case "error_status":
		return s.intPtr(&e.ErrorStatus)
	case "error":
		e.Error = bytes.Clone(s.raw())
	case "retry_delay_ms":
		return s.floatValue(&e.RetryDelayMS)
	case "description":
		return s.strValue(&e.Description)
	case "summary":
		return s.strValue(&e.Summary)
	case "status":
		return s.strValue(&e.Status)
	case "permission_denials":
		return s.denials(&e.PermissionDenials)
	case "usage":
		return s.usage(&e.Usage)
	default:
		s.skip()
	}
	return true
}

// keySet tracks the keys of one object, to hand back objects whose keys
// encoding/json would match differently: a known key twice (it merges the
// values) or in another case (it matches keys case-insensitively, and
// folds some non-ASCII letters to ASCII ones).
type keySet struct{ seen uint64 }

// add records k, one of known or an unknown key, and reports whether the
// fast path can go on.
func (ks *keySet) add(k []byte, known []string) bool {
	for i, name := range known {
		if string(k) == name {
			if ks.seen&(1<<i) != 0 {
				return false
			}
			ks.seen |= 1 << i
			return true
		}
	}
	for _, c := range k {
		if c >= 0x80 {
			return false
		}
	}
	for _, name := range known {
		if len(name) == len(k) && strings.EqualFold(name, string(k)) {
			return false
		}
	}
	return true
}

// stringList reads an array of strings; null sets dst to nil.
func (s *jsonScanner) stringList(dst *[]string) bool { return scanList(s, dst, s.strValue) }

// scanList reads an array whose items item reads; null sets dst to nil.
func scanList[T any](s *jsonScanner, dst *[]T, item func(*T) bool) bool {
	switch s.peek() {
	case 'n':
		s.literal("null")
		*dst = nil
		return true
	case '[':
	default:
		s.skip()
		return false
	}
	s.enter('[')
	list := []T{}
	for n := 0; s.more(']', &n); {
		list = append(list, *new(T))
		if !item(&list[len(list)-1]) {
			return false
		}
	}
	*dst = list
	return true
}

// objectStart starts reading an object for a pointer field: null sets
// isNull, another type reports false.
func (s *jsonScanner) objectStart() (isNull, ok bool) {
	switch s.peek() {
	case 'n':
		s.literal("null")
		return true, true
	case '{':
		s.enter('{')
		return false, true
	}
	s.skip()
	return false, false
}

// object reads an object whose members field reads, as fields does; null
// is an object without members, another type reports false.
func (s *jsonScanner) object(known []string, field func(k string) bool) bool {
	isNull, ok := s.objectStart()
	return ok && s.fields(isNull, known, field)
}

// fields reads the members of an object whose opening brace was read (a
// null one has none): each key must be new and one of known, or an unknown
// plain key (then skipped); field reads the value of a known one and says
// whether it was read. It reports whether the fast path can go on.
func (s *jsonScanner) fields(isNull bool, known []string, field func(k string) bool) bool {
	var seen keySet
	for n := 0; !isNull && s.more('}', &n); {
		k := s.key()
		if s.bad || !seen.add(k, known) {
			return false
		}
		if !field(string(k)) {
			return false
		}
	}
	return true
}

// rateLimitKeys are the keys of rateLimitInfo.
var rateLimitKeys = []string{"status", "resetsAt", "rateLimitType"}

// rateLimit reads rate_limit_info.
func (s *jsonScanner) rateLimit(dst **rateLimitInfo) bool {
	return scanPtr(s, dst, func(r *rateLimitInfo) bool {
		return s.object(rateLimitKeys, func(k string) bool {
			switch k {
			case "status":
				return s.strValue(&r.Status)
			case "resetsAt":
				return s.intValue(&r.ResetsAt, 64)
			case "rateLimitType":
				return s.strValue(&r.RateLimitType)
			}
			s.skip()
			return true
		})
	})
}

// usageKeys are the keys of tokenUsage.
var usageKeys = []string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}

// usage reads a result's usage.
func (s *jsonScanner) usage(dst **tokenUsage) bool {
	return scanPtr(s, dst, func(u *tokenUsage) bool {
		return s.object(usageKeys, func(k string) bool {
			switch k {
			case "input_tokens":
				return s.intValue(&u.Input, 64)
			case "output_tokens":
				return s.intValue(&u.Output, 64)
			case "cache_read_input_tokens":
				return s.intValue(&u.CacheRead, 64)
			case "cache_creation_input_tokens":
				return s.intValue(&u.CacheCreation, 64)
			}
			s.skip()
			return true
		})
	})
}

// denialKeys are the keys of permissionDenial.
var denialKeys = []string{"tool_name", "tool_use_id", "tool_input"}

// denials reads permission_denials.
func (s *jsonScanner) denials(dst *[]permissionDenial) bool {
	return scanList(s, dst, func(d *permissionDenial) bool {
		return s.object(denialKeys, func(k string) bool {
			switch k {
			case "tool_name":
				return s.strValue(&d.ToolName)
			case "tool_use_id":
				return s.strValue(&d.ToolUseID)
			case "tool_input":
				d.ToolInput = bytes.Clone(s.raw())
				return true
			}
			s.skip()
			return true
		})
	})
}

// messageKeys are the keys of streamMessage.
var messageKeys = []string{"model", "content"}

// message reads an assistant or user event's message.
func (s *jsonScanner) message(dst **streamMessage) bool {
	return scanPtr(s, dst, func(m *streamMessage) bool {
		return s.object(messageKeys, func(k string) bool {
			switch k {
			case "model":
				return s.strValue(&m.Model)
			case "content":
				return s.blocks(&m.Content)
			}
			s.skip()
			return true
		})
	})
}

// blocks reads message.content: an array of blocks, or a plain string (a
// user prompt), which is one text block.
func (s *jsonScanner) blocks(dst *[]contentBlock) bool {
	switch s.peek() {
	case 'n':
		s.literal("null")
		*dst = nil
		return true
	case '"':
		var text string
		s.strValue(&text)
		*dst = []contentBlock{{Type: "text", Text: text}}
		return true
	}
	return scanList(s, dst, s.block)
}

// blockKeys are the keys of contentBlock.
var blockKeys = []string{"type", "text", "id", "name", "input", "tool_use_id", "content", "is_error"}

// block reads one content block; null is a zero block.
func (s *jsonScanner) block(b *contentBlock) bool {
	return s.object(blockKeys, func(k string) bool {
		switch k {
		case "type":
			return s.strValue(&b.Type)
		case "text":
			return s.strValue(&b.Text)
		case "id":
			return s.strValue(&b.ID)
		case "name":
			return s.strValue(&b.Name)
		case "input":
			s.ws()
			start := s.i
			b.args = s.toolArgs()
			b.Input = clipInput(s.data[start:s.i], b.args != nil)
			return true
		case "tool_use_id":
			return s.strValue(&b.ToolUseID)
		case "content":
			return s.toolContent(&b.Content)
		case "is_error":
			return s.boolValue(&b.IsError)
		}
		s.skip()
		return true
	})
}

// toolContent reads a tool result's content: a string is measured in the
// scan and only its start decoded; other values go to its UnmarshalJSON.
func (s *jsonScanner) toolContent(c *toolContent) bool {
	if s.peek() != '"' {
		v := s.raw()
		return s.bad || c.UnmarshalJSON(v) == nil
	}
	raw, st := s.str()
	if !s.bad {
		c.set(raw, st)
	}
	return true
}

// toolArgKeys are the keys of a tool input the transcript reads.
var toolArgKeys = []string{"file_path", "notebook_path", "command", "pattern", "path", "description", "subagent_type", "url", "query", "old_string", "new_string", "replace_all", "content", "offset", "limit", "todos"}

// toolArgs reads a tool_use block's input. It returns nil, for the
// transcript to decode the input with encoding/json, when the input is not
// an object or has a field it cannot be sure of.
func (s *jsonScanner) toolArgs() *toolArgs {
	if s.peek() != '{' {
		s.skip()
		return nil
	}
	s.enter('{')
	a := &toolArgs{}
	sure := true
	var seen keySet
	for n := 0; s.more('}', &n); {
		k, st := s.rawKey()
		if s.bad {
			return nil
		}
		if st.escapes || !seen.add(k, toolArgKeys) {
			sure = false
			s.skip()
			continue
		}
		ok := true
		switch string(k) {
		case "file_path":
			ok = s.strValue(&a.FilePath)
		case "notebook_path":
			ok = s.strValue(&a.NotebookPath)
		case "command":
			ok = s.strValue(&a.Command)
		case "pattern":
			ok = s.strValue(&a.Pattern)
		case "path":
			ok = s.strValue(&a.Path)
		case "description":
			ok = s.strValue(&a.Description)
		case "subagent_type":
			ok = s.strValue(&a.Subagent)
		case "url":
			ok = s.strValue(&a.URL)
		case "query":
			ok = s.strValue(&a.Query)
		case "old_string":
			ok = s.strPtr(&a.OldString)
		case "new_string":
			ok = s.strPtr(&a.NewString)
		case "replace_all":
			ok = s.boolValue(&a.ReplaceAll)
		case "content":
			ok = s.contentSize(a)
		case "offset":
			ok = s.intField(&a.Offset)
		case "limit":
			ok = s.intField(&a.Limit)
		case "todos":
			a.Todos = bytes.Clone(s.raw())
		default:
			s.skip()
		}
		sure = sure && ok
	}
	if s.bad || !sure {
		return nil
	}
	return a
}

// contentSize reads a Write's content: only its size and line count are
// shown, so it is measured, not decoded.
func (s *jsonScanner) contentSize(a *toolArgs) bool {
	switch s.peek() {
	case 'n':
		s.literal("null")
		a.HasContent, a.ContentBytes, a.ContentLines = false, 0, 0
		return true
	case '"':
	default:
		s.skip()
		return false
	}
	raw, st := s.str()
	if s.bad {
		return true
	}
	a.HasContent = true
	a.ContentBytes = decodedLen(raw, st)
	a.ContentLines = st.newlines + 1
	return true
}
