package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// codexSeedLines are codex exec --json lines in the real CLI's shapes
// (codex-rs/exec/src/exec_events.rs), one of each kind the reader knows and
// some it does not.
var codexSeedLines = []string{
	`{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}`,
	`{"type":"turn.started"}`,
	`{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Planning the change**"}}`,
	`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}`,
	`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"docs\nsrc\n","exit_code":0,"status":"completed"}}`,
	`{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"bash -lc 'touch x'","aggregated_output":"touch: cannot touch 'x': Read-only file system\n","exit_code":1,"status":"failed"}}`,
	`{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"rm -rf /","aggregated_output":"","exit_code":null,"status":"declined"}}`,
	`{"type":"item.completed","item":{"id":"item_4","type":"file_change","changes":[{"path":"/w/src/a.go","kind":"update"},{"path":"/w/b.go","kind":"add"}],"status":"completed"}}`,
	`{"type":"item.started","item":{"id":"item_5","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":null,"error":null,"status":"in_progress"}}`,
	`{"type":"item.completed","item":{"id":"item_5","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"result":{"content":[],"structured_content":null},"error":null,"status":"completed"}}`,
	`{"type":"item.started","item":{"id":"item_6","type":"web_search","query":"go generics"}}`,
	`{"type":"item.completed","item":{"id":"item_7","type":"todo_list","items":[{"text":"a","completed":false}]}}`,
	`{"type":"item.completed","item":{"id":"item_8","type":"error","message":"command timed out"}}`,
	`{"type":"item.completed","item":{"id":"item_9","type":"agent_message","text":"Done: the tests pass."}}`,
	`{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}`,
	`{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}`,
	`{"type":"error","message":"You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 3:28 PM."}`,
	`{"type":"turn.failed","error":{"message":"You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again in 2 hours 5 minutes."}}`,
	`{"type":"item.plan.delta","item_id":"item_10","delta":"1. x"}`,
	`{"type":"item.updated","item":{"id":"item_7","type":"todo_list","items":[{"text":"a","completed":true}]}}`,
}

// codexOutcome reads a codex transcript as a run reads its agent's stream.
func codexOutcome(t testing.TB, transcript string) (*iterationOutcome, string) {
	var out bytes.Buffer
	o := &iterationOutcome{}
	decodeAgentStream(strings.NewReader(transcript), &out, o, nil, nil, &codexDecoder{pricing: codexDefaultPricing})
	return o, out.String()
}

func TestCodexStreamOutcome(t *testing.T) {
	o, text := codexOutcome(t, strings.Join(codexSeedLines[:15], "\n")+"\n")
	if failed, why := o.failed(); failed {
		t.Fatalf("failed: %s\n%s", why, text)
	}
	if got := o.resultText(); got != "Done: the tests pass." {
		t.Errorf("result text %q", got)
	}
	want := map[string]int{"command": 3, "file_change": 1, "mcp_tool_call": 1, "web_search": 1}
	for k, v := range want {
		if o.tools[k] != v {
			t.Errorf("tools[%s] = %d, want %d (%v)", k, o.tools[k], v, o.tools)
		}
	}
	var refused []string
	for _, d := range o.denials() {
		refused = append(refused, describeDenial(d, "/w"))
	}
	if got := strings.Join(refused, "; "); got != `command "touch x"; command "rm -rf /"` {
		t.Errorf("refused: %s", got)
	}
	// (24763-24448) × 1.25 + 24448 × 0.125 + 122 × 10, per million
	if c := o.cost(); fmt.Sprintf("%.6f", c) != "0.004670" || !o.result.costEstimated {
		t.Errorf("cost %f (estimated %v)", c, o.result.costEstimated)
	}
	if u := o.result.Usage; u == nil || u.Input != 24763 || u.CacheRead != 24448 || u.Output != 122 {
		t.Errorf("usage %+v", u)
	}
	for _, s := range []string{"🔧 command $ ls", "🔧 file_change /w/src/a.go, /w/b.go", "Done: the tests pass."} {
		if !strings.Contains(text, s) {
			t.Errorf("transcript lacks %q:\n%s", s, text)
		}
	}
	if o.malformed != 0 {
		t.Errorf("%d malformed", o.malformed)
	}
}

func TestCodexStreamLimit(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		line  string
		reset time.Time
	}{
		{codexSeedLines[17], now.Add(2*time.Hour + 5*time.Minute)},
		{`{"type":"turn.failed","error":{"message":"You've hit your usage limit. To get more access now, send a request to your admin or try again in 3 days 6 hours 57 minutes."}}`, now.Add(78*time.Hour + 57*time.Minute)},
		{`{"type":"turn.failed","error":{"message":"You've hit your usage limit. Upgrade to Pro or try again at 3:28 PM."}}`, time.Date(2026, 11, 27, 15, 28, 0, 0, time.UTC)},
		{`{"type":"turn.failed","error":{"message":"You've hit your usage limit."}}`, time.Time{}},
	} {
		o, _ := codexOutcome(t, codexSeedLines[0]+"\n"+tc.line+"\n")
		hit, reset := o.usageLimit(now)
		if !hit || !reset.Equal(tc.reset) {
			t.Errorf("%s: limit %v, reset %v; want %v", tc.line, hit, reset, tc.reset)
		}
	}
	// a failure of another kind, and a limit's words in a command's output,
	// are no limit
	o, _ := codexOutcome(t, `{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"cat x","aggregated_output":"You've hit your usage limit","exit_code":0,"status":"completed"}}`+"\n"+`{"type":"turn.failed","error":{"message":"stream error"}}`+"\n")
	if hit, _ := o.usageLimit(now); hit {
		t.Error("a limit text in tool output counted")
	}
	if failed, why := o.failed(); !failed || why != "stream error" {
		t.Errorf("failed %v %q", failed, why)
	}
}

// FuzzCodexStream: no line makes the reader panic, and what it makes of a
// line is a well-formed outcome. Seeds: the real event shapes, and the
// captured transcripts under testdata/fixtures/codex when there are.
func FuzzCodexStream(f *testing.F) {
	for _, l := range codexSeedLines {
		f.Add([]byte(l + "\n"))
	}
	f.Add([]byte(strings.Join(codexSeedLines, "\n")))
	files, _ := filepath.Glob("testdata/fixtures/codex/*.jsonl")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o := &iterationOutcome{}
		decodeAgentStream(bytes.NewReader(data), io.Discard, o, nil, func(e *streamEvent) {
			if e == nil || e.Type == "" {
				t.Fatalf("an event without a type")
			}
		}, &codexDecoder{pricing: codexDefaultPricing})
		o.failed()
		o.usageLimit(time.Now())
		if c := o.cost(); c < 0 || c != c {
			t.Fatalf("cost %v", c)
		}
		for _, d := range o.denials() {
			describeDenial(d, "/")
		}
	})
}

// genCodexTranscript writes a realistic codex exec --json transcript of
// about size bytes: turns of reasoning, commands with their output (test
// runs, listings, source files), file changes and messages, in the real
// CLI's shapes; the same size gives the same file.
func genCodexTranscript(size int) []byte {
	rng := rand.New(rand.NewSource(29))
	var b bytes.Buffer
	enc := func(v any) {
		line, _ := json.Marshal(v)
		b.Write(line)
		b.WriteByte('\n')
	}
	code := func(lines int) string {
		var s strings.Builder
		for i := 0; i < lines; i++ {
			fmt.Fprintf(&s, "\tif err := step%d(ctx, \"naïve \\\"quoted\\\" value\"); err != nil {\t// line %d\n", rng.Intn(1000), i)
		}
		return s.String()
	}
	enc(map[string]any{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"})
	enc(map[string]any{"type": "turn.started"})
	item := 0
	for b.Len() < size {
		item++
		enc(map[string]any{"type": "item.completed", "item": map[string]any{"id": fmt.Sprintf("item_%d", item), "type": "reasoning", "text": "**Checking the tests**\n\nI need to look at " + strings.Repeat("the failing case and its fixture ", 1+rng.Intn(8))}})
		item++
		id := fmt.Sprintf("item_%d", item)
		cmd := []string{"bash -lc 'go test ./...'", "bash -lc 'sed -n 1,200p src/server.go'", "bash -lc 'rg -n handler src'", "bash -lc ls"}[rng.Intn(4)]
		enc(map[string]any{"type": "item.started", "item": map[string]any{"id": id, "type": "command_execution", "command": cmd, "aggregated_output": "", "exit_code": nil, "status": "in_progress"}})
		exit := 0
		if rng.Intn(5) == 0 {
			exit = 1
		}
		status := map[bool]string{true: "completed", false: "failed"}[exit == 0]
		enc(map[string]any{"type": "item.completed", "item": map[string]any{"id": id, "type": "command_execution", "command": cmd, "aggregated_output": code(5 + rng.Intn(300)), "exit_code": exit, "status": status}})
		if rng.Intn(3) == 0 {
			item++
			enc(map[string]any{"type": "item.completed", "item": map[string]any{"id": fmt.Sprintf("item_%d", item), "type": "file_change", "changes": []any{map[string]any{"path": "/home/dev/project/src/server.go", "kind": "update"}}, "status": "completed"}})
		}
		item++
		enc(map[string]any{"type": "item.completed", "item": map[string]any{"id": fmt.Sprintf("item_%d", item), "type": "agent_message", "text": "I changed the handler; " + strings.Repeat("the tests now cover it. ", 1+rng.Intn(6))}})
	}
	enc(map[string]any{"type": "turn.completed", "usage": map[string]any{"input_tokens": 1234567, "cached_input_tokens": 1100000, "output_tokens": 23456}})
	return b.Bytes()
}

func TestCodexTranscriptReads(t *testing.T) {
	o, _ := codexOutcome(t, string(genCodexTranscript(1<<20)))
	if failed, why := o.failed(); failed || o.malformed != 0 || o.tools["command"] == 0 {
		t.Fatalf("failed %v %q, %d malformed, tools %v", failed, why, o.malformed, o.tools)
	}
}

// BenchmarkCodexStream reads a realistic 8 MiB codex transcript as a
// verbose run does (decoded, observed, formatted). scripts/bench.sh measures
// the binary on a 50 MiB one next to jq -c.
func BenchmarkCodexStream(b *testing.B) {
	data := genCodexTranscript(8 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := &iterationOutcome{}
		decodeAgentStream(bytes.NewReader(data), io.Discard, o, nil, nil, &codexDecoder{pricing: codexDefaultPricing})
	}
}

// TestCodexFixtures reads the real CLI's transcripts (testdata/fixtures/codex,
// codex-cli 0.171.0) as a run does, with their stderr.
func TestCodexFixtures(t *testing.T) {
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		name          string
		failed, limit bool
		why           string // the failure's reason, when failed
		refused       []string
		tools         map[string]int
	}{
		{name: "exec-loop-step", tools: map[string]int{"command": 4, "file_change": 2}},
		{name: "exec-bypass", tools: map[string]int{"command": 1, "file_change": 1}},
		{name: "exec-read-only-refused", refused: []string{
			`command "echo x > report.txt; echo rc=$?"`,
			`command "touch /etc/claude-iterate-codex-capture"`,
			`file_change (patch rejected: writing is blocked by read-only sandbox)`}},
		{name: "exec-workspace-write-refused", refused: []string{
			`command "touch /etc/claude-iterate-codex-capture"`,
			`file_change (patch rejected: writing outside of the project)`}},
		{name: "exec-usage-limit", failed: true, limit: true},
		{name: "exec-usage-limit-mid-turn", failed: true, limit: true},
		{name: "exec-api-500", failed: true, why: "We’re currently experiencing high demand, which may cause temporary errors."},
		{name: "exec-stream-failed", failed: true, why: "stream disconnected before completion: The model crashed."},
		// without a result, the reason quotes stderr's last line
		{name: "exec-sigint-during-command", failed: true, why: "agent exited without a result: 2026-11-27T06:45:40.791199Z ERROR codex_core::session: failed to record rollout items: thread 01a21bc0-a28a-7240-88bb-f7281059d93e not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/fixtures/codex", tc.name+".jsonl"))
			if err != nil {
				t.Skip(err)
			}
			stderr, _ := os.ReadFile(filepath.Join("testdata/fixtures/codex", tc.name+".stderr"))
			o, text := codexOutcome(t, string(data))
			o.finish(nil, string(stderr))
			o.lateRefused(agentChildSpec(codexAgent{}, &settings{}, "codex"))
			failed, why := o.failed()
			if failed != tc.failed || (tc.why != "" && why != tc.why) {
				t.Errorf("failed %v %q, want %v %q", failed, why, tc.failed, tc.why)
			}
			if hit, reset := o.usageLimit(now); hit != tc.limit || (hit && reset.IsZero()) {
				t.Errorf("limit %v reset %v, want %v", hit, reset, tc.limit)
			}
			var refused []string
			for _, d := range o.denials() {
				refused = append(refused, describeDenial(d, "/"))
			}
			if strings.Join(refused, "\n") != strings.Join(tc.refused, "\n") {
				t.Errorf("refused:\n%s\nwant:\n%s", strings.Join(refused, "\n"), strings.Join(tc.refused, "\n"))
			}
			for k, v := range tc.tools {
				if o.tools[k] != v {
					t.Errorf("tools %v, want %v", o.tools, tc.tools)
					break
				}
			}
			if o.malformed != 0 || strings.Count(text, "Result (") > 1 {
				t.Errorf("%d malformed; transcript:\n%s", o.malformed, text)
			}
		})
	}
}

// FuzzCodexFast: the fast path decodes a line as encoding/json does, or
// hands it back.
func FuzzCodexFast(f *testing.F) {
	for _, l := range codexSeedLines {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"c","aggregated_output":"a\\nb\\u00e9\n","exit_code":null,"status":"failed","changes":null}}`))
	f.Add([]byte(`{"type":"item.completed","TYPE":"x","item":{"aggregated_output":null}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := decodeCodexFast(line)
		if !ok {
			return
		}
		var slow codexEvent
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("the fast path took a line encoding/json refuses (%v): %s", err, line)
		}
		if !reflect.DeepEqual(fast, &slow) {
			t.Fatalf("fast %+v\nslow %+v\nline %s", fast, &slow, line)
		}
	})
}
