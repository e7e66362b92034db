package main

// This file implements a fake Anthropic Messages API for the tests that run
// the real claude CLI: an httptest server on loopback that streams
// server-sent events as the real API does (message_start, then per content
// block content_block_start / content_block_delta / content_block_stop, then
// message_delta with the stop reason and message_stop). The CLI is pointed at
// it with ANTHROPIC_BASE_URL.
//
// Its behaviour is a script, one reply per line, consumed in order by the
// model requests (POST /v1/messages). Blank lines and lines starting with #
// are ignored. Directives:
//
//	text TEXT           a text reply; the turn ends (end_turn)
//	tool NAME JSON      a call of tool NAME with input JSON (tool_use); the
//	                    CLI runs it and sends the result in its next request
//	error STATUS TEXT   an HTTP error STATUS (500, 400…) with the API's JSON
//	                    error body; x-should-retry: false, so the CLI gives up
//	                    at once instead of retrying for minutes
//	limit SECONDS       a 429 with a subscription's usage-limit headers,
//	                    rejected, resetting SECONDS from now
//	hang                accept the request and never answer
//
// A model request after the last line gets a 400 saying so, which fails the
// iteration visibly. Requests the script does not cover — other paths,
// token counting, non-streaming side requests — are logged and answered
// sensibly, so that a new CLI version's extra calls show in the test log
// instead of hanging the test.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseAPIScript parses a fake API script.
func parseAPIScript(text string) ([]apiStep, error) {
	return parseScript("api", text, func(verb, arg string) (string, bool) {
		switch verb {
		case "text":
			if arg == "" {
				return "no text", true
			}
		case "tool":
			name, input, _ := strings.Cut(arg, " ")
			if !isJSONObject(input) {
				return fmt.Sprintf("tool %s: input is not a JSON object: %s", name, input), true
			}
		default:
			return "", false
		}
		return "", true
	})
}

// fakeAPI is one running fake Messages API.
type fakeAPI struct {
	fakeServer
	// toolErrors are the tool results the CLI reported as errors.
	toolErrors []string
}

// startFakeAPI starts a fake API that replies as script says; logf receives
// one line per request.
func startFakeAPI(script []apiStep, logf func(format string, args ...any)) *fakeAPI {
	a := &fakeAPI{fakeServer: fakeServer{name: "fake API", script: script, logf: logf}}
	a.start(a.serve)
	return a
}

// url is the base URL for ANTHROPIC_BASE_URL.
func (a *fakeAPI) url() string { return a.srv.URL }

// messagesRequest is the part of a Messages API request the fake reads.
type messagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Tools    []any  `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (a *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		a.uncovered(r, "")
		switch {
		case r.Method == http.MethodHead:
			// A connectivity probe (2.1.197 sends HEAD / before each session).
			w.WriteHeader(http.StatusOK)
		case strings.HasSuffix(r.URL.Path, "/count_tokens"):
			// Token counting: a plausible count.
			writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 100})
		default:
			apiError(w, http.StatusNotFound, "not_found_error", "fake API: no such endpoint "+r.URL.Path)
		}
		return
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		a.uncovered(r, "invalid JSON")
		apiError(w, http.StatusBadRequest, "invalid_request_error", "fake API: "+err.Error())
		return
	}
	a.noteToolResults(req)
	if !req.Stream || len(req.Tools) == 0 {
		// Not the agent's own turn (a title, a summary, a classifier):
		// answer with a short text the CLI can use.
		a.uncovered(r, fmt.Sprintf("side request: model %s, stream %v, %d tools", req.Model, req.Stream, len(req.Tools)))
		a.reply(w, r, req, apiStep{verb: "text", arg: "ok"})
		return
	}
	n, step, ok := a.next()
	if !ok {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "fake API: no scripted reply left")
		return
	}
	a.logf("fake API: model request %d (%d messages): line %d: %s %s", n, len(req.Messages), step.line, step.verb, clip(step.arg, 120))
	a.reply(w, r, req, step)
}

// uncovered logs a request the script does not cover: a new CLI version's
// new calls show in the test log.
func (a *fakeAPI) uncovered(r *http.Request, what string) {
	line := r.Method + " " + r.URL.String()
	if what != "" {
		line += " (" + what + ")"
	}
	a.logf("fake API: uncovered request: %s", line)
}

// noteToolResults records the tool results in the request's last message
// that the CLI marked as errors (a refused or failed tool call).
func (a *fakeAPI) noteToolResults(req messagesRequest) {
	if len(req.Messages) == 0 {
		return
	}
	var blocks []struct {
		Type    string          `json:"type"`
		IsError bool            `json:"is_error"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(req.Messages[len(req.Messages)-1].Content, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		if b.Type == "tool_result" && b.IsError {
			a.mu.Lock()
			a.toolErrors = append(a.toolErrors, string(b.Content))
			a.mu.Unlock()
			a.logf("fake API: tool error: %s", clip(string(b.Content), 200))
		}
	}
}

// reply answers one request as step says.
func (a *fakeAPI) reply(w http.ResponseWriter, r *http.Request, req messagesRequest, step apiStep) {
	switch step.verb {
	case "error":
		status, text := errorStep(step.arg)
		kind := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
			404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		if kind == "" {
			kind = "api_error"
		}
		w.Header().Set("x-should-retry", "false")
		apiError(w, status, kind, text)
		return
	case "limit":
		secs, _ := strconv.Atoi(step.arg)
		reset := strconv.FormatInt(time.Now().Unix()+int64(secs), 10)
		h := w.Header()
		// What the API sends a subscription (OAuth) user who has used up
		// the five-hour allowance.
		h.Set("anthropic-ratelimit-unified-status", "rejected")
		h.Set("anthropic-ratelimit-unified-reset", reset)
		h.Set("anthropic-ratelimit-unified-representative-claim", "five_hour")
		h.Set("anthropic-ratelimit-unified-5h-status", "rejected")
		h.Set("anthropic-ratelimit-unified-5h-reset", reset)
		h.Set("anthropic-ratelimit-unified-5h-utilization", "1.0")
		h.Set("anthropic-ratelimit-unified-overage-status", "rejected")
		h.Set("anthropic-ratelimit-unified-overage-disabled-reason", "org_level_disabled")
		h.Set("retry-after", step.arg)
		h.Set("x-should-retry", "false")
		apiError(w, http.StatusTooManyRequests, "rate_limit_error", "Number of requests has exceeded your rate limit")
		return
	case "hang":
		a.hang(r)
		return
	}

	// A message with one content block.
	id := "msg_fake" + a.newID()
	var block map[string]any
	var deltas []map[string]any
	stop := "end_turn"
	switch step.verb {
	case "text":
		block = map[string]any{"type": "text", "text": ""}
		// Two deltas, as the API splits text.
		for _, part := range splitUTF8(step.arg, len(step.arg)/2+1) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": part})
		}
	case "tool":
		name, input, _ := strings.Cut(step.arg, " ")
		block = map[string]any{"type": "tool_use", "id": "toolu_" + id[4:], "name": name, "input": map[string]any{}}
		// The input arrives as partial JSON, split anywhere.
		var compact bytes.Buffer
		json.Compact(&compact, []byte(input))
		for _, part := range splitUTF8(compact.String(), 40) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": part})
		}
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		full := map[string]any{"type": "text", "text": step.arg}
		if step.verb == "tool" {
			name, input, _ := strings.Cut(step.arg, " ")
			full = map[string]any{"type": "tool_use", "id": block["id"], "name": name, "input": json.RawMessage(input)}
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{full}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	event := sseStream(w, "request-id", "req_"+id)
	event("message_start", map[string]any{"message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	event("content_block_start", map[string]any{"index": 0, "content_block": block})
	event("ping", map[string]any{})
	for _, d := range deltas {
		event("content_block_delta", map[string]any{"index": 0, "delta": d})
	}
	event("content_block_stop", map[string]any{"index": 0})
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	event("message_stop", map[string]any{})
}

// apiError writes the API's JSON error body.
func apiError(w http.ResponseWriter, status int, kind, message string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": message},
		"request_id": "req_fake_error"})
}
