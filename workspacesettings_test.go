package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// settingsCases are parseSettings' table, and the fuzz seeds.
var settingsCases = []struct {
	in, err string // err: a part of the error; "" for none
}{
	{`{"mode":"loop"}`, ""},
	{`{"mode":"iterative","config":{"defaultMaxIterations":3,"claude":{"args":["-x"]}}}`, ""},
	{`{"config":{},"mode":"loop"}`, ""},
	{`{"mode":"lop"}`, `:1:9: mode: want "loop" or "iterative", got "lop"`},
	{`{"mode":3}`, `mode: want "loop" or "iterative", got 3`},
	{`{"config":{"defaultDelay":1}}`, `no "mode"`},
	{`{"mode":"loop","Mode":"iterative"}`, `unknown key "Mode"`},
	{`{"mode":"loop","config":{"defaultDely":1}}`, `config.defaultDely: unknown key`},
	{`{"mode":"loop","config":[]}`, `config: want an object, got array`},
	{`{"mode":"loop","config":{"defaultDelay":"x"}}`, `config.defaultDelay`},
	{`{"mode":"loop","mode":"loop"}`, `duplicate key "mode"`},
	{`["loop"]`, `want a JSON object, got array`},
	{``, `empty file`},
}

func TestParseSettings(t *testing.T) {
	for _, c := range settingsCases {
		_, err := parseSettings(".workspace.json", []byte(c.in))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("parseSettings(%q) = %v; want no error", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("parseSettings(%q) = %v; want an error with %q", c.in, err, c.err)
		}
	}
}

func FuzzParseSettings(f *testing.F) {
	for _, c := range settingsCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSettings(".workspace.json", data)
		if err != nil {
			return
		}
		// What the tool writes back (writeSettings), it reads again the same.
		out, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		s2, err := parseSettings(".workspace.json", out)
		if err != nil {
			t.Fatalf("parseSettings(marshal(parseSettings(%q))) = %v", data, err)
		}
		out2, _ := json.MarshalIndent(s2, "", "  ")
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip of %q: %s, then %s", data, out, out2)
		}
	})
}
