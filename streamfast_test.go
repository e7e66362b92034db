package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
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
	// (encoding/json's are decoded with the event when the input is over
	// maxStringBytes, which the event then keeps only the start of.)
	if fast.Message != nil {
		for i := range fast.Message.Content {
			b := &fast.Message.Content[i]
			if b.args != nil {
				want := std.Message.Content[i].args
				if want == nil {
					want = decodeToolArgs(b.Input)
				}
				if !reflect.DeepEqual(b.args, want) {
					t.Fatalf("tool input %.300s:\nfast %+v\n std %+v", b.Input, *b.args, *want)
				}
				b.args = nil
				std.Message.Content[i].args = nil
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
		if len(raw) <= previewBytes && c.text != want {
			t.Fatalf("tool result %q: preview %q; want %q", raw, c.text, want)
		}
	})
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

// FuzzDecodePrefix checks the tool result preview decoder on any string
// body the scanner accepts, cut anywhere: the preview is a prefix of the
// whole decoded string, cut at most one escaped surrogate pair (12 bytes)
// before n.
func FuzzDecodePrefix(f *testing.F) {
	for _, s := range []string{`a\nb`, `\u00e9\ud83d\ude00`, `\ud83d\ude00x`, `\ud83dx`, `x\\`, `\\\"\/`, "\xff\\n", "é✓🔧"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, body string, n int) {
		quoted := []byte(`"` + body + `"`)
		s := &jsonScanner{data: quoted}
		raw, st := s.str()
		if !s.end() || n < 0 {
			return
		}
		whole := decodeStr(raw, st)
		got := decodePrefix(raw, n)
		if !strings.HasPrefix(whole, got) {
			t.Fatalf("decodePrefix(%q, %d) = %q: not a prefix of %q", raw, n, got, whole)
		}
		if n >= len(raw) && got != whole {
			t.Fatalf("decodePrefix(%q, %d) = %q; want %q", raw, n, got, whole)
		}
		if cut := prefixCut(raw, n); n < len(raw) && (cut > n || cut < n-11) {
			t.Fatalf("prefixCut(%q, %d) = %d", raw, n, cut)
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

// jsonKeys returns the keys encoding/json decodes into a value of type t:
// its fields' json tags (or names), in order.
func jsonKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys = append(keys, name)
	}
	return keys
}

// TestFastPathKeys holds the fast decoder's key lists to the struct tags
// encoding/json decodes with, and checks that each key of each list is
// decoded by the fast path as encoding/json decodes it.
func TestFastPathKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
		of   reflect.Type
	}{
		{"eventKeys", eventKeys, reflect.TypeFor[streamEvent]()},
		{"messageKeys", messageKeys, reflect.TypeFor[streamMessage]()},
		{"blockKeys", blockKeys, reflect.TypeFor[contentBlock]()},
		{"rateLimitKeys", rateLimitKeys, reflect.TypeFor[rateLimitInfo]()},
		{"denialKeys", denialKeys, reflect.TypeFor[permissionDenial]()},
		{"toolArgKeys", toolArgKeys, reflect.TypeFor[toolInput]()},
	} {
		if want := jsonKeys(tc.of); !slices.Equal(tc.keys, want) {
			t.Errorf("%s = %q; the json tags of %s are %q", tc.name, tc.keys, tc.of, want)
		}
	}
	// Each key, with a value of its type, takes the fast path and gives
	// encoding/json's event.
	value := func(f reflect.StructField) string {
		switch f.Type.Kind() {
		case reflect.String:
			return `"v\n\u00e9"`
		case reflect.Pointer:
			switch f.Type.Elem().Kind() {
			case reflect.String:
				return `"p"`
			case reflect.Int:
				return `7`
			case reflect.Float64:
				return `0.25`
			}
			return `{"status":"rejected","resetsAt":1768485600,"rateLimitType":"five_hour"}`
		case reflect.Bool:
			return `true`
		case reflect.Int, reflect.Int64:
			return `42`
		case reflect.Float64:
			return `1.5`
		case reflect.Slice:
			switch {
			case f.Type == reflect.TypeFor[json.RawMessage]():
				return `["raw",1]`
			case f.Type.Elem().Kind() == reflect.String:
				return `["a","b"]`
			case f.Type.Elem() == reflect.TypeFor[permissionDenial]():
				return `[{"tool_name":"Write","tool_use_id":"t1","tool_input":{"file_path":"x"}}]`
			}
			return `[{"type":"text","text":"hi"}]`
		}
		return `{"type":"text","text":"hi"}`
	}
	accept := func(line string) {
		t.Helper()
		if !checkFastPath(t, []byte(line)) {
			t.Errorf("fast path handed back %s", line)
		}
	}
	for f := range reflect.TypeFor[streamEvent]().Fields() {
		if k := jsonKeys(reflect.StructOf([]reflect.StructField{f})); len(k) == 1 && k[0] != "type" {
			accept(`{"type":"x","` + k[0] + `":` + value(f) + `}`)
		}
	}
	for f := range reflect.TypeFor[streamMessage]().Fields() {
		if f.IsExported() {
			accept(`{"type":"assistant","message":{"` + jsonKeys(reflect.StructOf([]reflect.StructField{f}))[0] + `":` + value(f) + `}}`)
		}
	}
	for f := range reflect.TypeFor[contentBlock]().Fields() {
		if f.IsExported() && f.Name != "Content" && f.Name != "Input" {
			accept(`{"type":"user","message":{"content":[{"` + jsonKeys(reflect.StructOf([]reflect.StructField{f}))[0] + `":` + value(f) + `}]}}`)
		}
	}
	accept(`{"type":"user","message":{"content":[{"type":"tool_result","content":"a\nb"}]}}`)
	for f := range reflect.TypeFor[toolInput]().Fields() {
		k := jsonKeys(reflect.StructOf([]reflect.StructField{f}))[0]
		v := value(f)
		if f.Name == "Content" {
			v = `"line\nline\n"`
		}
		line := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"X","input":{"` + k + `":` + v + `}}]}}`
		accept(line)
		if e, _ := decodeEventFast([]byte(line)); e == nil || e.Message.Content[0].args == nil {
			t.Errorf("tool input key %s: not decoded by the fast path", k)
		}
	}
}

// TestDecodeLongStrings: a string over maxStringBytes is kept clipped, its
// start and the count of the bytes left out, by both decoders alike; the
// fast one decodes little more than it keeps.
func TestDecodeLongStrings(t *testing.T) {
	long := strings.Repeat("line with \"quotes\" and é\n", 3*maxStringBytes/26)
	enc, _ := json.Marshal(long)
	want := clip(long, maxStringBytes)
	if !strings.HasSuffix(want, " more bytes)") || len(want) > maxStringBytes+40 {
		t.Fatalf("clip gave %d bytes ending %q", len(want), want[len(want)-40:])
	}
	for _, line := range []string{
		`{"type":"assistant","message":{"content":[{"type":"text","text":` + string(enc) + `}]}}`,
		`{"type":"result","subtype":"success","result":` + string(enc) + `}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Edit","input":{"file_path":"/x","old_string":` + string(enc) + `,"new_string":` + string(enc) + `}}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"x","text":` + string(enc) + `}]}}`, // encoding/json's
	} {
		e, err := decodeEvent([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		checkFastPath(t, []byte(line))
		var got []string
		switch {
		case e.Result != nil:
			got = append(got, *e.Result)
		case e.Message.Content[0].Type == "text":
			got = append(got, e.Message.Content[0].Text)
		default:
			b := e.Message.Content[0]
			a := b.args
			if a == nil {
				a = decodeToolArgs(b.Input)
			}
			got = append(got, *a.OldString, *a.NewString)
			if len(b.Input) > maxStringBytes {
				t.Errorf("the Edit's input is kept whole: %d bytes", len(b.Input))
			}
		}
		for _, g := range got {
			if g != want {
				t.Errorf("%.60s…: decoded %d bytes ending %q; want %d ending %q", line, len(g), g[max(0, len(g)-40):], len(want), want[len(want)-40:])
			}
		}
	}
	// Just over the limit, and escapes that shrink the string a lot.
	for _, s := range []string{strings.Repeat("a", maxStringBytes+1), strings.Repeat("\u0001", maxStringBytes/3), strings.Repeat("\u0001", maxStringBytes+2)} {
		enc, _ := json.Marshal(s)
		sc := &jsonScanner{data: enc}
		raw, st := sc.str()
		if got := decodeClipped(raw, st); got != clip(s, maxStringBytes) {
			t.Errorf("decodeClipped of %d bytes: %d bytes; want %d", len(s), len(got), len(clip(s, maxStringBytes)))
		}
	}
}

// decodeEventStd parses one line with encoding/json: the reference the
// fast path matches (a test helper: the binary never decodes a line whole
// this way).
func decodeEventStd(line []byte) (*streamEvent, error) {
	return decodeEventKeeping(line, nil)
}
