package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLineReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string
		skipped []int64
	}{
		{"plain", "a\nbb\n", 10, []string{"a", "bb"}, []int64{0, 0}},
		{"no final newline", "a\nbb", 10, []string{"a", "bb"}, []int64{0, 0}},
		{"crlf", "a\r\nb\r\n", 10, []string{"a", "b"}, []int64{0, 0}},
		{"empty lines", "\n\na\n", 10, []string{"", "", "a"}, []int64{0, 0, 0}},
		{"at the cap", "12345\nx\n", 5, []string{"12345", "x"}, []int64{0, 0}},
		{"over the cap is skipped", "123456\nx\n", 5, []string{"", "x"}, []int64{6, 0}},
		{"over the cap at EOF", "x\n1234567", 5, []string{"x", ""}, []int64{0, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := newLineReader(strings.NewReader(tt.in), tt.max)
			var got []string
			var skipped []int64
			for {
				line, sk, err := lr.next()
				if err != nil {
					break
				}
				got = append(got, string(line))
				skipped = append(skipped, sk)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("lines = %q; want %q", got, tt.want)
			}
			for i := range tt.skipped {
				if i >= len(skipped) || skipped[i] != tt.skipped[i] {
					t.Errorf("skipped = %v; want %v", skipped, tt.skipped)
					break
				}
			}
		})
	}
}

// TestLineReaderLongLines reads lines far longer than bufio's buffer.
func TestLineReaderLongLines(t *testing.T) {
	long := strings.Repeat("y", 3<<20)
	lr := newLineReader(strings.NewReader(long+"\nok\n"), maxLineBytes)
	line, sk, err := lr.next()
	if err != nil || sk != 0 || len(line) != len(long) {
		t.Fatalf("next() = %d bytes, skipped %d, %v; want %d bytes", len(line), sk, err, len(long))
	}
	line, _, _ = lr.next()
	if string(line) != "ok" {
		t.Fatalf("next() = %q; want ok", line)
	}
}

// TestLineReaderOverCap: a line over the cap is skipped as it streams,
// whatever its size relative to the buffers, and the next one is read.
func TestLineReaderOverCap(t *testing.T) {
	for _, size := range []int{lineDoublingLimit / 2, lineDoublingLimit + 1, 3 * lineDoublingLimit} {
		max := lineDoublingLimit * 2
		long := strings.Repeat("z", size)
		lr := newLineReader(strings.NewReader(long+"\n"+long+"x\nok"), max)
		for _, want := range []string{long, long + "x", "ok"} {
			line, sk, err := lr.next()
			if err != nil {
				t.Fatal(err)
			}
			if len(want) > max {
				if line != nil || sk != int64(len(want)) {
					t.Fatalf("size %d: got %d bytes, skipped %d; want %d skipped", size, len(line), sk, len(want))
				}
				continue
			}
			if string(line) != want || sk != 0 {
				t.Fatalf("size %d: got %d bytes, skipped %d; want %d bytes", size, len(line), sk, len(want))
			}
		}
	}
}

func TestDecodeEvent(t *testing.T) {
	tests := []struct {
		in      string
		typ     string
		wantErr bool
	}{
		{`{"type":"result","subtype":"success","result":"hi"}`, "result", false},
		{`{"type":"system","subtype":"init","tools":["a"]}`, "system", false},
		{`{"type":"novel_thing","x":1}`, "novel_thing", false},
		{`{"subtype":"x"}`, "", true},
		{`{"type":"assistant","message":{"content":"plain string"}}`, "assistant", false},
		{`not json`, "", true},
		// A field of the wrong type is ignored, the event kept.
		{`{"type":"result","total_cost_usd":"free"}`, "result", false},
		{`{"total_cost_usd":"free"}`, "", true},
	}
	for _, tt := range tests {
		e, err := decodeEvent([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("decodeEvent(%s) error = %v; want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && e.Type != tt.typ {
			t.Errorf("decodeEvent(%s).Type = %q; want %q", tt.in, e.Type, tt.typ)
		}
	}
}

// TestDecodeEventLenient: a result with one field of the wrong type keeps
// its other fields, and names the odd one.
func TestDecodeEventLenient(t *testing.T) {
	e, err := decodeEvent([]byte(`{"type":"result","subtype":"success","is_error":false,"num_turns":"3","result":"done","total_cost_usd":0.5,"permission_denials":[{"tool_name":"Write","tool_input":{"file_path":"a.go"}}]}`))
	if err != nil {
		t.Fatalf("decodeEvent: %v", err)
	}
	if e.badField != "num_turns" || e.Subtype != "success" || e.resultText() != "done" || e.TotalCostUSD == nil || *e.TotalCostUSD != 0.5 || len(e.PermissionDenials) != 1 {
		t.Errorf("decodeEvent = %+v", e)
	}
	o := &iterationOutcome{}
	o.observe(e)
	if failed, why := o.failed(); failed {
		t.Errorf("a success with an odd field failed: %s", why)
	}
}

func TestFormatter(t *testing.T) {
	tests := []struct {
		name   string
		events []string
		want   []string
	}{
		{"bash result preview is 20 lines", []string{
			`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"seq 30"}}]}}`,
			`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"` + seqLines(30) + `"}]}}`,
		}, []string{"🔧 Bash $ seq 30", "✓ Bash: 30 lines", "     20\n", "… 10 more lines"}},
		{"read preview is 15 lines", []string{
			`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a/b.go"}}]}}`,
			`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"` + seqLines(16) + `"}]}}`,
		}, []string{"🔧 Read /a/b.go", "     15\n", "… 1 more lines"}},
		{"edit shows both strings in full", []string{
			`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"f","old_string":"` + strings.Repeat("o", 900) + `","new_string":"n1\nn2"}}]}}`,
		}, []string{"   - " + strings.Repeat("o", 900) + "\n", "   + n1\n", "   + n2\n"}},
		{"error result", []string{
			`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x","is_error":true,"content":"File not found"}]}}`,
		}, []string{"✗ File not found"}},
		{"unknown tool and event are shown", []string{
			`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"mcp__x__y","input":{"k":"v"}}]}}`,
			`{"type":"brand_new","payload":1}`,
		}, []string{`🔧 mcp__x__y {"k":"v"}`, `[brand_new event] {"type":"brand_new","payload":1}`}},
		{"sub-agent output is indented", []string{
			`{"type":"assistant","parent_tool_use_id":"p","message":{"content":[{"type":"text","text":"inner"}]}}`,
		}, []string{"  │ inner"}},
		{"result without result text", []string{
			`{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (1)"],"num_turns":2}`,
		}, []string{"✗ Result (error_max_turns, 2 turns): Reached maximum number of turns (1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			f := newFormatter(&b)
			for _, ev := range tt.events {
				e, err := decodeEvent([]byte(ev))
				if err != nil {
					t.Fatalf("decodeEvent: %v", err)
				}
				f.format(e, []byte(ev))
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

func seqLines(n int) string {
	var s []string
	for i := 1; i <= n; i++ {
		s = append(s, "    "+strconv.Itoa(i))
	}
	return strings.Join(s, `\n`)
}

// TestFixtureOutcomes replays each fixture through the agent's reader logic
// and checks the judged outcome.
func TestFixtureOutcomes(t *testing.T) {
	now := time.Unix(1795290000, 0)
	tests := []struct {
		file      string
		failed    bool
		fatal     bool
		limit     bool
		malformed int
	}{
		{"01-not-logged-in.ndjson", true, true, false, 0},
		{"06-mock-hello.ndjson", false, false, false, 0},
		{"09-mock-max-turns-1.ndjson", true, false, false, 0},
		{"12-mock-api-400.ndjson", true, false, false, 0},
		{"14-mock-api-529-overloaded.ndjson", true, false, false, 0},
		{"16-mock-oauth-session-limit-429.ndjson", true, false, true, 0},
		{"17-mock-read-too-big-and-bash-persisted-output.ndjson", false, false, false, 0},
		{"20-mock-run-in-background-events-after-result.ndjson", false, false, false, 0},
		{"23-sigint-during-bash-exit0.ndjson", true, false, false, 0},
		{"handmade-all-events.ndjson", false, false, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			o := replayFixture(t, filepath.Join("testdata/fixtures", tt.file))
			if failed, why := o.failed(); failed != tt.failed {
				t.Errorf("failed() = %v (%s); want %v", failed, why, tt.failed)
			}
			if got := o.fatal() != nil; got != tt.fatal {
				t.Errorf("fatal() = %v; want %v", got, tt.fatal)
			}
			if got, _ := o.usageLimit(now); got != tt.limit {
				t.Errorf("usageLimit() = %v; want %v", got, tt.limit)
			}
			if o.malformed != tt.malformed {
				t.Errorf("malformed = %d; want %d", o.malformed, tt.malformed)
			}
		})
	}
}

func replayFixture(t testing.TB, path string) *iterationOutcome {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := &iterationOutcome{}
	decodeStream(f, io.Discard, o, nil, nil)
	return o
}

// FuzzStreamJSON feeds arbitrary lines to the decoder and formatter: they
// must never panic, and the reader must account for every byte.
func FuzzStreamJSON(f *testing.F) {
	files, _ := filepath.Glob("testdata/fixtures/*.ndjson")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			if len(line) < 4096 {
				f.Add(line)
			}
		}
	}
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"TodoWrite","input":{"todos":"x"}}]}}`))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"image"}]}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		o := &iterationOutcome{}
		fm := newFormatter(io.Discard)
		if e, err := decodeEvent(line); err == nil {
			o.observe(e)
			fm.format(e, line)
			o.failed()
			o.fatal()
			o.usageLimit(time.Now())
		}
		lr := newLineReader(bytes.NewReader(line), 64)
		n := 0
		for {
			l, sk, err := lr.next()
			if err != nil {
				break
			}
			n += len(l) + int(sk)
		}
		if n > len(line) {
			t.Fatalf("line reader returned %d bytes from %d", n, len(line))
		}
	})
}

// benchTranscript is a verbose-mode transcript: the handmade fixture (a
// 306 KB line among small events) and 1 MiB tool results.
func benchTranscript(b *testing.B) []byte {
	data, err := os.ReadFile("testdata/fixtures/handmade-all-events.ndjson")
	if err != nil {
		b.Fatal(err)
	}
	big := `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t9","content":"` + strings.Repeat(`line of file content here\n`, 1<<20/27) + `"}]}}` + "\n"
	var buf bytes.Buffer
	for buf.Len() < 16<<20 {
		buf.Write(data)
		buf.WriteString(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t9","name":"Read","input":{"file_path":"/x"}}]}}` + "\n")
		buf.WriteString(big)
	}
	return buf.Bytes()
}

// BenchmarkStreamJSON measures the reader, decoder and verbose formatter.
func BenchmarkStreamJSON(b *testing.B) {
	data := benchTranscript(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		o := &iterationOutcome{}
		decodeStream(bytes.NewReader(data), io.Discard, o, nil, nil)
		if o.tools["Read"] == 0 {
			b.Fatal("no tool calls seen")
		}
	}
}

// FuzzToolResultPreview checks the preview of a tool result's string
// against encoding/json, whole and cut.
func FuzzToolResultPreview(f *testing.F) {
	for _, s := range []string{"plain", "a\nb\tc", `quote " and \ slash /`, "é ✓ 🔧", "\x01\u2028"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, cut int) {
		enc, err := json.Marshal(s)
		if err != nil {
			return
		}
		var want string
		json.Unmarshal(enc, &want)
		var c toolContent
		if err := c.UnmarshalJSON(enc); err != nil {
			t.Fatal(err)
		}
		if len(enc) <= previewBytes && c.text != want {
			t.Fatalf("preview of %s = %q; want %q", enc, c.text, want)
		}
		if cut >= 0 && cut < len(enc)-2 {
			raw := enc[1 : len(enc)-1]
			if got := decodePrefix(raw, cut); !strings.HasPrefix(want, got) {
				t.Fatalf("decodePrefix(%s, %d) = %q: not a prefix of %q", raw, cut, got, want)
			}
		}
	})
}

// TestPreviewBytes: the decoded start of a tool result holds the longest
// preview shown, and an error's 2,000 bytes.
func TestPreviewBytes(t *testing.T) {
	if previewBytes < max(previewBashLines, previewReadLines, previewOtherLines)*previewLineWidth || previewBytes < 2000 {
		t.Errorf("previewBytes %d is short of a whole preview", previewBytes)
	}
	text := strings.Repeat(strings.Repeat("y", previewLineWidth)+"\n", 2*previewBashLines)
	var out bytes.Buffer
	f := newFormatter(&out)
	f.format(&streamEvent{Type: "assistant", Message: &streamMessage{Content: []contentBlock{{Type: "tool_use", ID: "t", Name: "Bash", Input: []byte(`{"command":"x"}`)}}}}, nil)
	enc, _ := json.Marshal(text)
	var c toolContent
	if err := c.UnmarshalJSON(enc); err != nil {
		t.Fatal(err)
	}
	f.format(&streamEvent{Type: "user", Message: &streamMessage{Content: []contentBlock{{Type: "tool_result", ToolUseID: "t", Content: c}}}}, nil)
	if got := strings.Count(out.String(), "     "+strings.Repeat("y", previewLineWidth)+"\n"); got != previewBashLines {
		t.Errorf("%d whole lines shown; want %d:\n%s", got, previewBashLines, out.String())
	}
}

// BenchmarkStreamFixtures measures the reader, decoder and verbose
// formatter on the real CLI's event shapes: every fixture line, repeated
// (tool calls and results, text, sub-agents, a 306 KB line). Profile the
// fast path with -cpuprofile on it; scripts/bench.sh measures the binary
// on a bigger generated transcript of the same shapes.
func BenchmarkStreamFixtures(b *testing.B) {
	var buf bytes.Buffer
	for lines := fixtureLines(b); buf.Len() < 16<<20; {
		for _, l := range lines {
			buf.Write(l)
			buf.WriteByte('\n')
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		decodeStream(bytes.NewReader(data), io.Discard, &iterationOutcome{}, nil, nil)
	}
}

// TestReadLinesReusesItsBuffer: a stream read to its end gives its 64 KiB
// read buffer back for the next one (a run reads one per iteration).
func TestReadLinesReusesItsBuffer(t *testing.T) {
	stream := []byte(`{"type":"result","subtype":"success"}` + "\n")
	read := func() {
		n := 0
		readLines(bytes.NewReader(stream), io.Discard, maxLineBytes, func(line []byte, skipped int64) { n++ })
		if n != 1 {
			t.Fatalf("%d lines", n)
		}
	}
	read()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const streams = 100
	for range streams {
		read()
	}
	runtime.ReadMemStats(&after)
	// Under -race, sync.Pool drops one Put in four.
	if per := (after.TotalAlloc - before.TotalAlloc) / streams; per > 40<<10 {
		t.Fatalf("%d bytes allocated per stream: the read buffer is not reused", per)
	}
}
