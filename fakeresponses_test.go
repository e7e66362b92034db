package main

// This file implements a fake OpenAI Responses API for the tests that run
// the real Codex CLI (realcodex_test.go): an httptest server on loopback
// that streams server-sent events as the real service does for
// POST /v1/responses (response.created, then per output item
// response.output_item.added, its deltas and response.output_item.done, then
// response.completed with the token usage), and answers errors with the
// service's JSON bodies. Codex is pointed at it by a config.toml naming it as
// a model provider (codexConfig).
//
// Its behaviour is a script, one reply per line, consumed in order by the
// model requests. Blank lines and lines starting with # are ignored.
// Directives:
//
//	text TEXT           an assistant message; the turn ends
//	call NAME JSON      a function call of tool NAME with arguments JSON
//	                    (exec_command, shell…); Codex runs it and sends its
//	                    output in the next request
//	patch TEXT          a call of the freeform apply_patch tool with TEXT, in
//	                    which \n stands for a newline
//	error STATUS TEXT   an HTTP error STATUS (500, 400…) with the API's JSON
//	                    error body
//	limit SECONDS       a 429 whose body says the plan's usage limit is
//	                    reached, resetting SECONDS from now (what Codex
//	                    reports as "You've hit your usage limit")
//	fail CODE TEXT      a stream that ends in response.failed with error
//	                    CODE and message TEXT
//	hang                accept the request and never answer
//
// A model request after the last line gets a 400 saying so, which fails the
// turn visibly. Other requests (a model list, anything a new Codex version
// adds) are logged and answered with an empty success or a 404, so that
// they show in the test log instead of hanging the test.
//
// The fake is also the CLI's HTTP(S) proxy (codexEnv): a request for any
// other host arrives here as a proxy request, is refused and recorded as
// stray, and the scenario fails on it. So no request leaves loopback
// unnoticed, whatever a new Codex version starts to fetch.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseResponsesScript parses a fake Responses API script.
func parseResponsesScript(text string) ([]apiStep, error) {
	return parseScript("responses", text, func(verb, arg string) (string, bool) {
		switch verb {
		case "text", "patch":
			if arg == "" {
				return "nothing to send", true
			}
		case "call":
			name, args, _ := strings.Cut(arg, " ")
			if !isJSONObject(args) {
				return fmt.Sprintf("call %s: arguments are not a JSON object: %s", name, args), true
			}
		case "fail":
			if code, _, _ := strings.Cut(arg, " "); code == "" {
				return "no error code", true
			}
		default:
			return "", false
		}
		return "", true
	})
}

// fakeResponses is one running fake Responses API.
type fakeResponses struct {
	fakeServer
	// outputs are the tool outputs Codex sent back, in order: what its
	// commands printed, its sandbox's refusals, apply_patch's verdicts.
	outputs []string
	seen    map[string]bool // the call ids of outputs
	// stray are the requests for other hosts that reached the fake as
	// their proxy: each would have left loopback.
	stray []string
	// developer is the developer messages' text of the last model
	// request: Codex's instructions and the ones it was given.
	developer string
}

// startFakeResponses starts a fake Responses API that replies as script
// says; logf receives one line per request.
func startFakeResponses(script []apiStep, logf func(format string, args ...any)) *fakeResponses {
	a := &fakeResponses{fakeServer: fakeServer{name: "fake responses", script: script, logf: logf}, seen: map[string]bool{}}
	a.start(a.serve)
	return a
}

// url is the provider's base_url.
func (a *fakeResponses) url() string { return a.srv.URL + "/v1" }

// responsesRequest is the part of a Responses API request the fake reads.
type responsesRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Tools  []json.RawMessage `json:"tools"`
	Input  []json.RawMessage `json:"input"`
}

func (a *fakeResponses) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodConnect || r.URL.IsAbs() {
		// A request for another host, sent here as its proxy
		// (codexEnv's HTTPS_PROXY): it would have left loopback.
		a.mu.Lock()
		a.stray = append(a.stray, r.Method+" "+r.Host)
		a.mu.Unlock()
		a.logf("fake responses: STRAY request for another host: %s %s", r.Method, r.URL)
		http.Error(w, "fake responses: no request leaves loopback", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		a.logf("fake responses: uncovered request: %s %s", r.Method, r.URL)
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
			writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
			return
		}
		responsesError(w, http.StatusNotFound, "invalid_request_error", "not_found", "fake responses: no such endpoint "+r.URL.Path)
		return
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		a.logf("fake responses: invalid JSON: %v", err)
		responsesError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "fake responses: "+err.Error())
		return
	}
	outputs := toolOutputs(req.Input)
	a.mu.Lock()
	// A request carries its whole conversation, and each codex exec is a
	// conversation of its own: an output is new when its call is.
	for _, o := range outputs {
		if a.seen[o.callID] {
			continue
		}
		a.seen[o.callID] = true
		a.outputs = append(a.outputs, o.text)
		a.logf("fake responses: tool output: %s", clip(o.text, 200))
	}
	a.developer = developerText(req.Input)
	a.mu.Unlock()
	n, step, ok := a.next()
	if !ok {
		responsesError(w, http.StatusBadRequest, "invalid_request_error", "script_exhausted", "fake responses: no scripted reply left")
		return
	}
	a.logf("fake responses: model request %d (model %s, %d input items, tools %s): line %d: %s %s",
		n, req.Model, len(req.Input), toolNames(req.Tools), step.line, step.verb, clip(step.arg, 120))
	a.reply(w, r, req, step)
}

// toolNames lists the names of the tools a request offers.
func toolNames(tools []json.RawMessage) string {
	var names []string
	for _, raw := range tools {
		var tool struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &tool) == nil {
			if tool.Name == "" {
				tool.Name = tool.Type
			}
			names = append(names, tool.Name)
		}
	}
	return strings.Join(names, ",")
}

// developerText joins the text of the developer messages in a request's
// input.
func developerText(input []json.RawMessage) string {
	var b strings.Builder
	for _, raw := range input {
		var msg struct {
			Type, Role string
			Content    []struct{ Text string }
		}
		if json.Unmarshal(raw, &msg) != nil || msg.Type != "message" || msg.Role != "developer" {
			continue
		}
		for _, c := range msg.Content {
			b.WriteString(c.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// toolOutput is the output of one tool call.
type toolOutput struct{ callID, text string }

// toolOutputs returns the outputs of the tool calls in a request's input,
// in order.
func toolOutputs(input []json.RawMessage) []toolOutput {
	var outs []toolOutput
	for _, raw := range input {
		var item struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &item) != nil || !strings.HasSuffix(item.Type, "_call_output") {
			continue
		}
		o := toolOutput{callID: item.CallID}
		if json.Unmarshal(item.Output, &o.text) != nil {
			o.text = string(item.Output)
		}
		outs = append(outs, o)
	}
	return outs
}

// reply answers one model request as step says.
func (a *fakeResponses) reply(w http.ResponseWriter, r *http.Request, req responsesRequest, step apiStep) {
	switch step.verb {
	case "error":
		status, text := errorStep(step.arg)
		kind := map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
			429: "requests"}[status]
		if kind == "" {
			kind = "server_error"
		}
		responsesError(w, status, kind, "", text)
		return
	case "limit":
		secs, _ := strconv.Atoi(step.arg)
		reset := time.Now().Unix() + int64(secs)
		// What the service sends a plan that has used up its allowance
		// (codex-api's api_bridge.rs reads type, plan_type and resets_at).
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
			"type": "usage_limit_reached", "message": "The usage limit has been reached",
			"plan_type": "plus", "resets_at": reset, "resets_in_seconds": secs}})
		return
	case "hang":
		a.hang(r)
		return
	}

	id := a.newID()
	event := sseStream(w, "x-request-id", "req_fake"+id)
	resp := map[string]any{"id": "resp_fake" + id, "object": "response", "created_at": time.Now().Unix(),
		"status": "in_progress", "model": req.Model, "output": []any{}}
	event("response.created", map[string]any{"response": resp})
	event("response.in_progress", map[string]any{"response": resp})

	var item map[string]any
	switch step.verb {
	case "text":
		itemID := "msg_fake" + id
		event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "message", "id": itemID, "status": "in_progress", "role": "assistant", "content": []any{}}})
		event("response.content_part.added", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		// Two deltas, as the service splits text.
		for _, part := range splitUTF8(step.arg, len(step.arg)/2+1) {
			event("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "delta": part})
		}
		event("response.output_text.done", map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0, "text": step.arg})
		item = map[string]any{"type": "message", "id": itemID, "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": step.arg, "annotations": []any{}}}}
	case "call":
		name, args, _ := strings.Cut(step.arg, " ")
		item = map[string]any{"type": "function_call", "id": "fc_fake" + id, "call_id": "call_fake" + id,
			"name": name, "arguments": args, "status": "completed"}
		event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "function_call", "id": "fc_fake" + id, "call_id": "call_fake" + id, "name": name, "arguments": "", "status": "in_progress"}})
		event("response.function_call_arguments.delta", map[string]any{"item_id": "fc_fake" + id, "output_index": 0, "delta": args})
		event("response.function_call_arguments.done", map[string]any{"item_id": "fc_fake" + id, "output_index": 0, "arguments": args})
	case "patch":
		input := strings.ReplaceAll(step.arg, `\n`, "\n")
		item = map[string]any{"type": "custom_tool_call", "id": "ctc_fake" + id, "call_id": "call_fake" + id,
			"name": "apply_patch", "input": input, "status": "completed"}
		event("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
			"type": "custom_tool_call", "id": "ctc_fake" + id, "call_id": "call_fake" + id, "name": "apply_patch", "input": "", "status": "in_progress"}})
		event("response.custom_tool_call_input.delta", map[string]any{"item_id": "ctc_fake" + id, "output_index": 0, "delta": input})
	case "fail":
		code, text, _ := strings.Cut(step.arg, " ")
		failed := map[string]any{"id": "resp_fake" + id, "object": "response", "status": "failed", "model": req.Model,
			"output": []any{}, "error": map[string]any{"code": code, "message": text}}
		event("response.failed", map[string]any{"response": failed})
		return
	}
	event("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	done := map[string]any{"id": "resp_fake" + id, "object": "response", "status": "completed", "model": req.Model,
		"output": []any{item}, "usage": map[string]any{
			"input_tokens": 1200, "input_tokens_details": map[string]any{"cached_tokens": 200},
			"output_tokens": 80, "output_tokens_details": map[string]any{"reasoning_tokens": 16},
			"total_tokens": 1280}}
	event("response.completed", map[string]any{"response": done})
}

// responsesError writes the service's JSON error body.
func responsesError(w http.ResponseWriter, status int, kind, code, message string) {
	var c any
	if code != "" {
		c = code
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"type": kind, "code": c, "message": message, "param": nil}})
}
