package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// fixtureLines returns every line of the stream-json fixtures.
func fixtureLines(t testing.TB) [][]byte {
	files, err := filepath.Glob("testdata/fixtures/*.ndjson")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var lines [][]byte
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) > 0 {
				lines = append(lines, line)
			}
		}
	}
	return lines
}

// checkFastPath fails t when the fast path accepted line and its event
// differs from encoding/json's; it reports whether the fast path accepted.
func checkFastPath(t *testing.T, line []byte) bool {
	t.Helper()
	fast, ok := decodeEventFast(line)
	if !ok {
		return false
	}
	std, err := decodeEventStd(line)
	if err != nil || std.badField != "" {
		t.Fatalf("fast path accepted %q; encoding/json: %v, bad field %q", line, err, std.badField)
	}
	// The fast path decodes tool inputs too: they must match what the
	// transcript would decode with encoding/json.
	if fast.Message != nil {
		for i := range fast.Message.Content {
			b := &fast.Message.Content[i]
			if b.args != nil {
				if want := decodeToolArgs(b.Input); !reflect.DeepEqual(b.args, want) {
					t.Fatalf("tool input %s:\nfast %+v\n std %+v", b.Input, *b.args, *want)
				}
				b.args = nil
			}
		}
	}
	if !reflect.DeepEqual(fast, std) {
		t.Fatalf("decoding %q:\nfast %#v\n std %#v", line, fast, std)
	}
	return true
}

// TestDecodeEventFastFixtures: every fixture line encoding/json decodes
// cleanly takes the fast path, with the same result.
func TestDecodeEventFastFixtures(t *testing.T) {
	for _, line := range fixtureLines(t) {
		std, err := decodeEventStd(line)
		if err != nil || std.badField != "" {
			continue
		}
		if !checkFastPath(t, line) {
			t.Errorf("fast path declined a clean line: %s", clip(string(line), 300))
		}
	}
}

// fastPathCases are lines at the fast path's edges: each either matches
// encoding/json or is handed back to it. The first fastAccepted of them
// must take the fast path.
var fastPathCases = []string{
	`{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":0.25,"num_turns":3,"errors":null}`,
	`{"type":"result","result":null,"api_error_status":429,"total_cost_usd":null,"errors":["a","b"],"permission_denials":[{"tool_name":"Bash","tool_use_id":"x","tool_input":{"command":"rm -rf /"}},null]}`,
	`{"type":"system","subtype":"init","model":"m","tools":["Bash","Read"],"parent_tool_use_id":null}`,
	`{"type":"system","subtype":"init","tools":[]}`,
	`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"error_status":529,"error":"overloaded","retry_delay_ms":512.5}`,
	`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1795290000,"rateLimitType":"five_hour","extra":[1,{"a":null}]}}`,
	`{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Limit reached \u00b7 resets 3pm"}]}}`,
	`{"type":"assistant","message":{"content":"plain string"}}`,
	`{"type":"assistant","message":{"content":[null,{"type":"thinking","thinking":"…"}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Write","input":{"file_path":"/f","content":"a\nb\u00e9\ud83d\ude00\\n"}}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Write","input":{"file_path":"/f","content":"bad \ud800 ` + "\xff" + ` surrogate"}}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Edit","input":{"file_path":"f","old_string":"a","new_string":null,"replace_all":true}}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"f","offset":"3"}}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"f","FILE_PATH":"g"}}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Read","input":["f"]}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"TodoWrite","input":{"todos":[{"content":"x","status":"completed"}]}}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"a\nb\\nc\u000a","is_error":false}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x\ny"},{"type":"image"}]}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":null}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":12}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":""}]}}`,
	` {"type" : "x" , "a" : [ 1 , -2.5e+3 , true , false , null , { } , [ ] ] } `,
	`{"type":"x","Type":"y"}`,
	`{"type":"x","type":"y"}`,
	`{"type":"x","ſubtype":"y"}`,
	`{"ty\u0070e":"x"}`,
	`{"type":"x","num_turns":1.0}`,
	`{"type":"x","num_turns":99999999999999999999}`,
	`{"type":"x","total_cost_usd":1e999}`,
	`{"type":"x","message":null,"rate_limit_info":null,"tools":null,"permission_denials":null}`,
	`{"type":"x","message":[]}`,
	`{"type":"x","a":01}`,
	`{"type":"x","a":"` + "\x01" + `"}`,
	`{"type":"x",}`,
	`{"type":"x"} x`,
	`{"type":"x","a":[1,]}`,
	`{"type":"x","a":"\q"}`,
	`{"type":"x","a":"\u12"}`,
	`{"type":"x","a":-}`,
	`{"type":"x","a":1.}`,
	`{"type":"x","a":tru}`,
	`{"type":""}`,
	`{}`,
	`[]`,
	`"type"`,
	``,
}

// fastAccepted counts the cases above that the fast path must accept.
const fastAccepted = 22

func TestDecodeEventFastCases(t *testing.T) {
	for i, c := range fastPathCases {
		if !checkFastPath(t, []byte(c)) && i < fastAccepted {
			t.Errorf("fast path declined %s", c)
		}
	}
}

// FuzzDecodeEventFast compares the fast path with encoding/json on any
// line: when the fast path accepts a line, its event must be encoding/json's.
func FuzzDecodeEventFast(f *testing.F) {
	for _, line := range fixtureLines(f) {
		if len(line) < 8192 {
			f.Add(line)
		}
	}
	for _, c := range fastPathCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFastPath(t, line)
	})
}

// FuzzJSONScan checks the scanner's validation against encoding/json's.
func FuzzJSONScan(f *testing.F) {
	for _, c := range fastPathCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(strings.Repeat("[", maxScanDepth+1) + strings.Repeat("]", maxScanDepth+1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &jsonScanner{data: data}
		s.skip()
		valid := s.end()
		if valid != json.Valid(data) && !(s.bad && s.depth >= maxScanDepth) {
			t.Fatalf("scanner says valid=%v for %q; encoding/json says %v", valid, data, !valid)
		}
	})
}

// FuzzJSONString checks the string scanner and decoder against
// encoding/json: validity, decoded text and length, newlines, and the tool
// result preview.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{`plain`, `a\nb\n`, `\u000a`, `\\n`, `\ud83d\ude00`, `\ud800x`, `\udc00\ud800`, "\xff\xfe", `\"\/\b\f\r\t`, `é`, `\u00e9\n`, "tab\there", `\u12`, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		quoted := []byte(`"` + body + `"`)
		var want string
		wantErr := json.Unmarshal(quoted, &want)
		s := &jsonScanner{data: quoted}
		raw, st := s.str()
		if ok := s.end(); ok != (wantErr == nil) {
			t.Fatalf("scanning %q: ok %v; encoding/json: %v", quoted, ok, wantErr)
		}
		if wantErr != nil {
			return
		}
		if got := decodeStr(raw, st); got != want {
			t.Fatalf("decodeStr(%q) = %q; want %q", raw, got, want)
		}
		if got := decodedLen(raw, st); got != len(want) {
			t.Fatalf("decodedLen(%q) = %d; want %d", raw, got, len(want))
		}
		if st.newlines != strings.Count(want, "\n") || st.lastNL != strings.HasSuffix(want, "\n") {
			t.Fatalf("stats of %q: %+v", raw, st)
		}
		var c toolContent
		if err := c.UnmarshalJSON(quoted); err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(want, "\n") + 1
		if strings.HasSuffix(want, "\n") {
			lines--
		}
		if want == "" {
			lines = 0
		}
		if c.lines != lines {
			t.Fatalf("tool result %q: %d lines; want %d", raw, c.lines, lines)
		}
		// The preview keeps invalid UTF-8 as it is, where encoding/json
		// writes U+FFFD.
		if len(raw) <= previewBytes && perByteValid(c.text) != want {
			t.Fatalf("tool result %q: preview %q; want %q", raw, c.text, want)
		}
	})
}

// perByteValid replaces each byte of an invalid UTF-8 sequence with
// U+FFFD, as encoding/json does.
func perByteValid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

// TestToolResultLines: an escaped backslash before an n is not a newline.
func TestToolResultLines(t *testing.T) {
	for in, want := range map[string]int{`""`: 0, `"a"`: 1, `"a\n"`: 1, `"a\nb"`: 2, `"a\\nb"`: 1, `"a\\\nb"`: 2, `"a\u000ab"`: 2, `"\n\n"`: 2} {
		var c toolContent
		if err := c.UnmarshalJSON([]byte(in)); err != nil || c.lines != want {
			t.Errorf("lines of %s = %d, %v; want %d", in, c.lines, err, want)
		}
	}
}

// unquoteJSONPrefixByByte is the byte-at-a-time decoder unquoteJSONPrefix
// replaced: the reference for cut strings.
func unquoteJSONPrefixByByte(raw []byte) string {
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

// FuzzUnquoteJSONPrefixCut compares the preview decoder with the
// byte-at-a-time one on any input, cut or not.
func FuzzUnquoteJSONPrefixCut(f *testing.F) {
	for _, s := range []string{`a\nb`, `\u00e9\ud83d\ude00`, `\ud83d\`, `\u12`, `x\`, `\\\"\/`, "\xff\\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := unquoteJSONPrefix(raw), unquoteJSONPrefixByByte(raw); got != want {
			t.Fatalf("unquoteJSONPrefix(%q) = %q; want %q", raw, got, want)
		}
	})
}

// TestDecodeEventFastMutations compares the fast path with encoding/json
// on the fixture lines with a byte replaced or inserted here and there: a
// deterministic sweep over the edges fuzzing may take long to find.
func TestDecodeEventFastMutations(t *testing.T) {
	subs := []string{"", `"`, `\`, `}`, `]`, `,`, `0`, "\x01", "\xff", `\u`, `null`, `"x"`, `T`}
	for _, line := range fixtureLines(t) {
		if len(line) > 600 {
			continue
		}
		for i := 0; i < len(line); i += 23 {
			for _, s := range subs {
				checkFastPath(t, append(append(append([]byte{}, line[:i]...), s...), line[i+1:]...))
				checkFastPath(t, append(append(append([]byte{}, line[:i]...), s...), line[i:]...))
			}
		}
	}
}
