package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		in      string
		key     string
		want    string
		wantErr string
	}{
		{`{"defaultDelay": 1.5}`, "defaultDelay", "1.5", ""},
		{`{"claude": {"command": "c2"}}`, "claude.command", "c2", ""},
		{`{"claude.command": "c3"}`, "claude.command", "c3", ""},
		{`{"notification": {"statusWatch": {"enabled": false}}}`, "notification.statusWatch.enabled", "false", ""},
		{`{"defaultMaxIterations": 2.5}`, "", "", "defaultMaxIterations: want a whole number"},
		{`{"defaultMaxIterations": -1}`, "", "", "must not be negative"},
		{`{"outputLevel": 3}`, "", "", "outputLevel: want a string, got number"},
		{`{"claude": {"args": "x"}}`, "", "", "claude.args: want an array of strings"},
		{`{"notifyUrl": "file:///etc"}`, "", "", "not an http(s) URL"},
		{`{"workspacesDir": ""}`, "", "", "must not be empty"},
		{`{"stop": []}`, "", "", "stop: want an object"},
		{`{"defaultdelay": 1}`, "", "", `unknown key (did you mean "defaultDelay"?)`},
		{`{"x": {"y": 1}}`, "", "", "x: unknown key"},
	}
	for _, tt := range tests {
		doc, err := parseJSONDoc("c.json", []byte(tt.in))
		if err != nil {
			t.Fatalf("parseJSONDoc(%s): %v", tt.in, err)
		}
		got := map[string]any{}
		err = parseConfigObject(doc, doc.Root, "", got)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("config %s: error = %v; want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("config %s: %v", tt.in, err)
			continue
		}
		k := lookupConfigKey(tt.key)
		if v := displayValue(k, got[tt.key]); v != tt.want {
			t.Errorf("config %s: %s = %s; want %s", tt.in, tt.key, v, tt.want)
		}
	}
}

func TestJSONPositions(t *testing.T) {
	_, err := parseJSONDoc("f.json", []byte("{\n  \"a\": 1,\n  \"b\" 2\n}"))
	if err == nil || !strings.HasPrefix(err.Error(), "f.json:3:") {
		t.Errorf("error = %v; want it at line 3", err)
	}
	doc, _ := parseJSONDoc("f.json", []byte("{\n  \"a\": [1,\n     \"x\"]}"))
	n := doc.Root.Obj["a"].Arr[1]
	if line, col := position(doc.Data, n.Off); line != 3 || col != 6 {
		t.Errorf("position = %d:%d; want 3:6", line, col)
	}
}

func TestRedactURL(t *testing.T) {
	checkStrings(t, "redactURL", redactURL, map[string]string{
		"https://user:pw@ntfy.sh/topic": "https://xxxxx@ntfy.sh/topic",
		"https://ntfy.sh/topic":         "https://ntfy.sh/topic",
		"https://tok@ntfy.sh/t":         "https://xxxxx@ntfy.sh/t",
		"https://h/t?auth=a&x=1":        "https://h/t?auth=xxxxx&x=1",
		"https://h/t?oauth_token=a":     "https://h/t?oauth_token=xxxxx",
		"https://h/t?Api_Key=a":         "https://h/t?Api_Key=xxxxx",
		"https://h/t?sig=a":             "https://h/t?sig=xxxxx",
		"https://h/t?priority=3":        "https://h/t?priority=3",
	})
}

func FuzzConfigFile(f *testing.F) {
	f.Add([]byte(`{"claude": {"command": "c", "args": ["a"]}, "defaultDelay": 2}`))
	f.Add([]byte(`{"stop": {"conditions": [{"type": "never"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseJSONDoc("f", data)
		if err != nil || doc.Root.Kind != jsonObject {
			return
		}
		out := map[string]any{}
		if parseConfigObject(doc, doc.Root, "", out) != nil {
			return
		}
		// What is accepted is a known key with a value of its kind, which
		// the typed settings take.
		s := resolveSettings(&configLayer{name: layerProject, values: out})
		plain := map[string]any{}
		for k, v := range out {
			if lookupConfigKey(k) == nil {
				t.Fatalf("accepted an unknown key %q", k)
			}
			if !s.set(k, v) {
				t.Fatalf("the settings do not take key %q", k)
			}
			if k != "stop" {
				plain[k] = v
			}
		}
		// And it reads back the same from the file it would be written to.
		data2, err := json.Marshal(plain)
		if err != nil {
			t.Fatal(err)
		}
		doc2, err := parseJSONDoc("f", data2)
		if err != nil {
			t.Fatalf("re-reading %s: %v", data2, err)
		}
		back := map[string]any{}
		if err := parseConfigObject(doc2, doc2.Root, "", back); err != nil {
			t.Fatalf("re-reading %s: %v", data2, err)
		}
		if !reflect.DeepEqual(back, plain) {
			t.Fatalf("read back %v; want %v", back, plain)
		}
	})
}
