package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestErrorMessageText pins how an agent's JSON error text is reduced: the
// message with its code (else its type), the text around the body kept,
// anything that is no error body left as it is.
func TestErrorMessageText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"error":{"code":null,"message":"bad request thing","param":null,"type":"invalid_request_error"}}`, "bad request thing (invalid_request_error)"},
		{`{"error":{"code":"model_not_found","message":"the model is gone","type":"invalid_request_error"}}`, "the model is gone (model_not_found)"},
		{`API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"},"request_id":"req_1"}`, "API Error: 400 prompt is too long (invalid_request_error)"},
		{`unexpected status 500: {"error":{"message":"boom","status":500}} (retrying)`, "unexpected status 500: boom (500) (retrying)"},
		{`{"error":"plain words"}`, "plain words"},
		{`{"message":"{\"error\":{\"message\":\"inner\",\"type\":\"server_error\"}}","type":"error"}`, "inner (server_error)"},
		{`{"detail":"no message here"}`, `{"detail":"no message here"}`},
		{`not json {at all`, `not json {at all`},
		{"the model is unavailable", "the model is unavailable"},
		{`{"error":{"message":"rate limited (rate_limit)","type":"rate_limit"}}`, "rate limited (rate_limit)"},
		{`{"message":"the model is gone","code":"model_not_found"}`, "the model is gone (model_not_found)"},
		{`max turns: the agent said {"message":"hi","step":2}`, `max turns: the agent said {"message":"hi","step":2}`},
	} {
		if got := errorMessageText(c.in); got != c.want {
			t.Errorf("errorMessageText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCodexErrorsShown pins that codex's errors reach the transcript and
// the outcome as the API body's message: a retry, an error item, the
// error event and turn.failed.
func TestCodexErrorsShown(t *testing.T) {
	body := `{\"error\":{\"code\":null,\"message\":\"bad request thing\",\"type\":\"invalid_request_error\"}}`
	o, text := codexOutcome(t, `{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/5 (unexpected status 500: `+body+`)"}
{"type":"item.completed","item":{"id":"i","type":"error","message":"`+body+`"}}
{"type":"error","message":"`+body+`"}
{"type":"turn.failed","error":{"message":"`+body+`"}}
`)
	if strings.Contains(text, `{"error"`) || strings.Contains(text, `{\"error\"`) {
		t.Errorf("the transcript shows the raw body:\n%s", text)
	}
	if strings.Count(text, "bad request thing (invalid_request_error)") < 3 {
		t.Errorf("the transcript does not show the message for each error:\n%s", text)
	}
	if failed, why := o.failed(); !failed || why != "bad request thing (invalid_request_error)" {
		t.Errorf("failed() = %v, %q", failed, why)
	}
}

// TestErrorMessageTextBounds pins errorMessageText's two bounds: a text of
// maxErrorJSONBytes is reduced, a byte longer is kept as it is; a body
// wrapped in three bodies or fewer (as a message, or as the "error" text)
// is reduced to its message, one wrapped in four is kept as its JSON.
func TestErrorMessageTextBounds(t *testing.T) {
	body := `{"error":{"message":"m","code":"c"}}`
	for _, c := range []struct {
		size int
		want string
	}{{maxErrorJSONBytes, "m (c)"}, {maxErrorJSONBytes + 1, body}} {
		pad := strings.Repeat("a", c.size-len(body))
		if got := errorMessageText(pad + body); got != pad+c.want {
			t.Errorf("a text of %d bytes: %q…, want %q…", c.size, got[len(pad):], c.want)
		}
	}
	quote := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		name  string
		inner string
		wrap  func(string) string
		want  string
	}{
		{"message", `{"error":{"message":"core","type":"server_error"}}`,
			func(s string) string { return `{"error":{"message":` + quote(s) + `,"type":"server_error"}}` }, "core (server_error)"},
		{"error text", `{"error":"core"}`,
			func(s string) string { return `{"error":` + quote(s) + `}` }, "core"},
	} {
		text := c.inner
		for wraps := 1; wraps <= 4; wraps++ {
			text = c.wrap(text)
			want := c.want
			if wraps == 4 {
				want = c.inner
			}
			if got := errorMessageText(text); got != want {
				t.Errorf("%s wrapped %d times: %q, want %q", c.name, wraps, got, want)
			}
		}
	}
}
