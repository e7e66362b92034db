package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestFakeAPI checks the fake Messages API itself, without the CLI: the
// script's faults, the event stream of a text and of a tool call as a client
// reassembles them, the errors, the usage-limit headers and exhaustion.
func TestFakeAPI(t *testing.T) {
	for _, bad := range []string{"text", "tool Write [1]", "tool Write {", "error 200 no", "limit soon", "wait 3"} {
		if _, err := parseAPIScript(bad); err == nil {
			t.Errorf("parseAPIScript(%q) accepted it", bad)
		}
	}
	script, err := parseAPIScript(`# comment
text ää✓✓
tool Write {"file_path": "/tmp/ä.txt", "content": "✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓✓\nß"}
error 500 broken
limit 60
`)
	if err != nil {
		t.Fatal(err)
	}
	api := startFakeAPI(script, t.Logf)
	defer api.close()
	post := poster(t, api.url()+"/v1/messages?beta=true")
	const turn = `{"model":"m","stream":true,"tools":[{"name":"Write"}],"messages":[{"role":"user","content":"hi"}]}`

	// A text reply, in two deltas.
	events := readSSE(t, post(turn))
	if got := eventNames(events); got != "message_start content_block_start ping content_block_delta content_block_delta content_block_stop message_delta message_stop" {
		t.Errorf("text reply events: %s", got)
	}
	if text, _ := assemble(t, events); text != "ää✓✓" {
		t.Errorf("text reply: %q", text)
	}

	// A tool call: its input reassembled from the partial JSON.
	events = readSSE(t, post(turn))
	_, input := assemble(t, events)
	var in map[string]string
	if err := json.Unmarshal([]byte(input), &in); err != nil || in["file_path"] != "/tmp/ä.txt" || in["content"] != strings.Repeat("✓", 30)+"\nß" {
		t.Errorf("tool input %q: %v", input, err)
	}
	if stop := events[len(events)-2].data["delta"].(map[string]any)["stop_reason"]; stop != "tool_use" {
		t.Errorf("tool call stop_reason %v", stop)
	}

	// A 500 the client must not retry.
	resp := post(turn)
	if resp.StatusCode != 500 || resp.Header.Get("x-should-retry") != "false" {
		t.Errorf("error: status %d, x-should-retry %q", resp.StatusCode, resp.Header.Get("x-should-retry"))
	}

	// A usage limit: rejected, resetting in a minute.
	resp = post(turn)
	reset, _ := strconv.ParseInt(resp.Header.Get("anthropic-ratelimit-unified-reset"), 10, 64)
	if resp.StatusCode != 429 || resp.Header.Get("anthropic-ratelimit-unified-status") != "rejected" ||
		reset < time.Now().Unix()+50 || reset > time.Now().Unix()+70 {
		t.Errorf("limit: status %d, headers %v", resp.StatusCode, resp.Header)
	}

	// A side request does not use up the script; a turn past its end is a 400.
	if resp := post(`{"model":"m","stream":false,"messages":[]}`); resp.StatusCode != 200 {
		t.Errorf("side request: status %d", resp.StatusCode)
	}
	if resp := post(turn); resp.StatusCode != 400 {
		t.Errorf("past the script: status %d", resp.StatusCode)
	}
	api.mu.Lock()
	served := api.served
	api.mu.Unlock()
	if served != 5 {
		t.Errorf("served %d model requests; want 5", served)
	}
}

// poster returns what POSTs a JSON body to url, the response's body
// closed when the test ends.
func poster(t *testing.T, url string) func(body string) *http.Response {
	return func(body string) *http.Response {
		t.Helper()
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data map[string]any
}

// readSSE reads a whole event stream, checking each event's form.
func readSSE(t *testing.T, resp *http.Response) []sseEvent {
	t.Helper()
	if resp.StatusCode != 200 || resp.Header.Get("content-type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, content-type %q: %s", resp.StatusCode, resp.Header.Get("content-type"), body)
	}
	var events []sseEvent
	sc := bufio.NewScanner(resp.Body)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Fatalf("event %s: %v", name, err)
			}
			if data["type"] != name {
				t.Errorf("event %s has type %v", name, data["type"])
			}
			events = append(events, sseEvent{name, data})
		case line != "":
			t.Errorf("unexpected line %q", line)
		}
	}
	return events
}

func eventNames(events []sseEvent) string {
	var names []string
	for _, e := range events {
		names = append(names, e.name)
	}
	return strings.Join(names, " ")
}

// assemble joins the deltas as a client does: the text, and a tool call's
// input JSON. Every delta must be valid UTF-8 on its own.
func assemble(t *testing.T, events []sseEvent) (text, input string) {
	t.Helper()
	for _, e := range events {
		if e.name != "content_block_delta" {
			continue
		}
		d := e.data["delta"].(map[string]any)
		for _, k := range []string{"text", "partial_json"} {
			if s, ok := d[k].(string); ok && !utf8.ValidString(s) {
				t.Errorf("delta %q is not valid UTF-8", s)
			}
		}
		switch d["type"] {
		case "text_delta":
			text += d["text"].(string)
		case "input_json_delta":
			input += d["partial_json"].(string)
		}
	}
	return text, input
}
