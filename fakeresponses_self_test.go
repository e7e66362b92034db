package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestFakeResponses checks the fake Responses API itself, without the CLI:
// the script's faults, the event streams of a message, a function call, a
// patch and a failed response as codex-api reads them (each data's type
// matches its event, the item is whole in output_item.done, the usage in
// response.completed), the usage-limit body, the tool outputs counted once
// by call id, exhaustion, and a proxy request for another host recorded as
// stray.
func TestFakeResponses(t *testing.T) {
	for _, bad := range []string{"text", "patch", "call exec_command [1]", "call exec_command {", "error 200 no", "limit soon", "fail", "wait 3"} {
		if _, err := parseResponsesScript(bad); err == nil {
			t.Errorf("parseResponsesScript(%q) accepted it", bad)
		}
	}
	script, err := parseResponsesScript(`# comment
text ää✓✓
call exec_command {"cmd": "echo ✓"}
patch *** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n
fail server_error it broke
limit 60
`)
	if err != nil {
		t.Fatal(err)
	}
	api := startFakeResponses(script, t.Logf)
	defer api.close()
	post := poster(t, api.url()+"/responses")
	turn := func(outputs ...string) string {
		input := []any{map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "be brief"}}}}
		for _, id := range outputs {
			input = append(input, map[string]any{"type": "function_call_output", "call_id": id, "output": "out " + id})
		}
		data, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "input": input})
		return string(data)
	}
	// done returns the item of output_item.done and the usage of
	// response.completed, checking every event's form.
	done := func(events []sseEvent) (item, usage map[string]any) {
		t.Helper()
		for _, e := range events {
			if e.data["type"] != e.name {
				t.Errorf("event %s has type %v", e.name, e.data["type"])
			}
			switch e.name {
			case "response.output_item.done":
				item, _ = e.data["item"].(map[string]any)
			case "response.completed":
				resp, _ := e.data["response"].(map[string]any)
				usage, _ = resp["usage"].(map[string]any)
				if resp["id"] == "" || resp["id"] == nil {
					t.Errorf("response.completed without an id")
				}
			}
		}
		return item, usage
	}

	// A message: created first, its text in deltas, completed last with
	// the usage codex reads.
	events := readSSE(t, post(turn()))
	names := eventNames(events)
	if !strings.HasPrefix(names, "response.created ") || !strings.HasSuffix(names, " response.output_item.done response.completed") || strings.Count(names, "response.output_text.delta") != 2 {
		t.Errorf("message events: %s", names)
	}
	var deltas string
	for _, e := range events {
		if e.name == "response.output_text.delta" {
			deltas += e.data["delta"].(string)
		}
	}
	item, usage := done(events)
	content, _ := item["content"].([]any)
	if deltas != "ää✓✓" || item["type"] != "message" || item["role"] != "assistant" || len(content) != 1 || content[0].(map[string]any)["text"] != "ää✓✓" {
		t.Errorf("message: deltas %q, item %v", deltas, item)
	}
	for _, k := range []string{"input_tokens", "output_tokens", "total_tokens"} {
		if n, ok := usage[k].(float64); !ok || n <= 0 {
			t.Errorf("usage %s = %v", k, usage[k])
		}
	}
	if api.developer != "be brief\n" {
		t.Errorf("developer text %q", api.developer)
	}

	// A function call, its arguments whole; a patch, its input with
	// newlines.
	item, _ = done(readSSE(t, post(turn())))
	if item["type"] != "function_call" || item["name"] != "exec_command" || item["arguments"] != `{"cmd": "echo ✓"}` || item["call_id"] == "" {
		t.Errorf("function call item: %v", item)
	}
	item, _ = done(readSSE(t, post(turn("call_a"))))
	if item["type"] != "custom_tool_call" || item["name"] != "apply_patch" || item["input"] != "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n" {
		t.Errorf("patch item: %v", item)
	}

	// A failed response: response.failed with the error, no completed.
	events = readSSE(t, post(turn("call_a", "call_b")))
	if got := eventNames(events); !strings.HasSuffix(got, "response.failed") || strings.Contains(got, "response.completed") {
		t.Errorf("failed response events: %s", got)
	}
	failed, _ := events[len(events)-1].data["response"].(map[string]any)
	if e, _ := failed["error"].(map[string]any); e["code"] != "server_error" || e["message"] != "it broke" {
		t.Errorf("response.failed error: %v", failed["error"])
	}
	// Outputs are counted once each, however often a request repeats them.
	if got := strings.Join(api.outputs, ","); got != "out call_a,out call_b" {
		t.Errorf("outputs %q", got)
	}

	// The usage limit: 429, the body codex-api reads.
	resp := post(turn())
	var body struct {
		Error struct {
			Type     string `json:"type"`
			PlanType string `json:"plan_type"`
			ResetsAt int64  `json:"resets_at"`
		} `json:"error"`
	}
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &body); err != nil || resp.StatusCode != 429 || body.Error.Type != "usage_limit_reached" || body.Error.PlanType != "plus" {
		t.Errorf("usage limit: %d %s", resp.StatusCode, data)
	}
	if d := time.Until(time.Unix(body.Error.ResetsAt, 0)); d < 55*time.Second || d > 65*time.Second {
		t.Errorf("usage limit resets in %v; want 60s", d)
	}

	// Exhausted: a 400 saying so.
	if resp := post(turn()); resp.StatusCode != 400 {
		t.Errorf("exhausted script: status %d", resp.StatusCode)
	}
	if api.served != 6 {
		t.Errorf("served %d model requests; want 6", api.served)
	}

	// A request for another host through the fake as a proxy: refused and
	// recorded, never a model request.
	proxy, _ := url.Parse(api.srv.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	if resp, err := client.Get("http://example.com/plugins"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("proxy request: status %d", resp.StatusCode)
		}
	}
	if len(api.stray) != 1 || !strings.Contains(api.stray[0], "example.com") || api.served != 6 {
		t.Errorf("stray %q, served %d", api.stray, api.served)
	}
}
