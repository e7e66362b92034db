package main

// This file reduces an error text an agent gives as JSON to what it says.
// The APIs behind the agents answer a failed request with a JSON body, and
// the CLIs pass that body on as their error text: codex as the whole of
// its turn.failed and error messages, or on its stderr; claude after an
// "API Error: 400 " prefix in its result. A record, a console line or
// status shows the body's message, with its code (or, without one, its
// type), instead of the raw JSON.

import (
	"encoding/json"
	"fmt"
	"strings"
)

// maxErrorJSONBytes bounds the text errorMessageText decodes: an error
// body is short; a longer text is shown as it is (and clipped where shown).
const maxErrorJSONBytes = 64 << 10

// errorMessageText is text with the JSON error body in it reduced to its
// message, "message (code)": the text before the body (claude's "API
// Error: 400 ") and after it kept. A text whose JSON says no message is
// returned as it is.
func errorMessageText(text string) string {
	return errorMessageTextDepth(text, 0)
}

// errorBodyMessage is the message of an error body ({"error": {"message",
// "code", "type"}}, {"error": "text"}, {"message", "code"}), with its code,
// or its type when it has none, in brackets; "" when it says none, or is
// no error body (an object with a "message" and neither an "error", a
// code, a status nor the type "error": the agent's own JSON, kept). A
// message that is itself a JSON body (a CLI wrapping the API's) is reduced
// in turn, depth bounding that.
func errorBodyMessage(body map[string]any, depth int) string {
	if depth > 3 {
		return ""
	}
	e := body
	switch v := body["error"].(type) {
	case map[string]any:
		e = v
	case string:
		if v != "" {
			return errorMessageTextDepth(v, depth+1)
		}
	default:
		if body["type"] != "error" && errorBodyField(body["code"]) == "" && errorBodyField(body["status"]) == "" {
			return ""
		}
	}
	msg, _ := e["message"].(string)
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	msg = errorMessageTextDepth(msg, depth+1)
	what := errorBodyField(e["code"])
	if what == "" {
		what = errorBodyField(e["status"])
	}
	if t := errorBodyField(e["type"]); what == "" && t != "error" {
		what = t
	}
	if what != "" && !strings.Contains(msg, what) {
		msg += " (" + what + ")"
	}
	return msg
}

// errorMessageTextDepth is errorMessageText of a text found at depth.
func errorMessageTextDepth(text string, depth int) string {
	i := strings.IndexByte(text, '{')
	if i < 0 || len(text) > maxErrorJSONBytes {
		return text
	}
	dec := json.NewDecoder(strings.NewReader(text[i:]))
	var body map[string]any
	if dec.Decode(&body) != nil {
		return text
	}
	msg := errorBodyMessage(body, depth)
	if msg == "" {
		return text
	}
	return strings.TrimRight(text[:i]+msg+text[i+int(dec.InputOffset()):], " \t\r\n")
}

// errorBodyField is a code, status or type as text: a string or a number;
// "" for null or anything else.
func errorBodyField(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case float64:
		return fmt.Sprint(v)
	}
	return ""
}

// stderrLinesShown are the last n lines of an agent's stderr as a console
// line shows them: each JSON error body reduced to its message.
func stderrLinesShown(tail string, n int) string {
	lines := strings.Split(strings.TrimSpace(tail), "\n")
	lines = lines[max(len(lines)-n, 0):]
	for i, l := range lines {
		lines[i] = errorMessageText(l)
	}
	return lastLines(strings.Join(lines, "\n"), n)
}
