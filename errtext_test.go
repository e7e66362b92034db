package main

import "testing"

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
	} {
		if got := errorMessageText(c.in); got != c.want {
			t.Errorf("errorMessageText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
