package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSameOrigin(t *testing.T) {
	for _, tt := range []struct {
		origin, site string
		want         bool
	}{
		{"", "", true}, // a program: no browser to say otherwise
		{"http://127.0.0.1:8080", "", true},
		{"https://127.0.0.1:8080", "same-origin", true}, // behind a TLS proxy
		{"", "same-origin", true},
		{"", "none", true},
		{"http://evil.example", "", false},
		{"http://127.0.0.1:8081", "", false},
		{"null", "", false},
		{"http://127.0.0.1:8080", "cross-site", false},
		{"", "same-site", false},
		{"file://127.0.0.1:8080", "", false},
	} {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8080/api/runs/1-2/stop", nil)
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if tt.site != "" {
			r.Header.Set("Sec-Fetch-Site", tt.site)
		}
		if got := sameOrigin(r); got != tt.want {
			t.Errorf("sameOrigin(Origin %q, Sec-Fetch-Site %q) = %v; want %v", tt.origin, tt.site, got, tt.want)
		}
	}
}

func TestCredential(t *testing.T) {
	const token = "00112233445566778899aabbccddeeff0011223344556677"
	g := &serveGate{token: token}
	for _, tt := range []struct {
		auth, cookie, query string
		want                int
	}{
		{"", "", "", credNone},
		{"Bearer " + token, "", "", credHeader},
		{"Bearer " + token[:47], "", "", credNone},
		{"Basic " + token, "", "", credNone},
		{"Bearer wrong", token, token, credNone}, // a wrong header decides
		{"", token, "", credCookie},
		{"", "wrong", token, credQuery},
		{"", token, token, credQuery}, // the redirect takes it out of the address bar
		{"", token, "wrong", credNone},
		{"", "", token, credQuery},
		{"", "", token + "0", credNone},
	} {
		r := httptest.NewRequest("GET", "http://127.0.0.1:8080/api/runs", nil)
		if tt.query != "" {
			r.URL.RawQuery = "token=" + tt.query
		}
		if tt.auth != "" {
			r.Header.Set("Authorization", tt.auth)
		}
		if tt.cookie != "" {
			r.Header.Set("Cookie", serveCookie+"="+tt.cookie)
		}
		if got := g.credential(r); got != tt.want {
			t.Errorf("credential(auth %q, cookie %q, query %q) = %d; want %d", tt.auth, tt.cookie, tt.query, got, tt.want)
		}
	}
}

func TestListenAddr(t *testing.T) {
	for _, tt := range []struct {
		listen string
		port   int
		want   string // "" for a usage error
	}{
		{"", 0, "127.0.0.1:0"},
		{"", 8080, "127.0.0.1:8080"},
		{"100.64.0.7", 8080, "100.64.0.7:8080"},
		{"100.64.0.7:9000", 0, "100.64.0.7:9000"},
		{"100.64.0.7:9000", 9000, "100.64.0.7:9000"},
		{"100.64.0.7:9000", 8080, ""},
		{"[::1]", 80, "[::1]:80"},
		{"[::1]:81", 0, "[::1]:81"},
		{"host:port", 0, ""},
		{"a/b", 0, ""},
	} {
		got, err := listenAddr(tt.listen, tt.port)
		if tt.want == "" {
			if err == nil {
				t.Errorf("listenAddr(%q, %d) = %q; want an error", tt.listen, tt.port, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("listenAddr(%q, %d) = %q, %v; want %q", tt.listen, tt.port, got, err, tt.want)
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "127.0.0.2": true, "::1": true, "localhost": true,
		"0.0.0.0": false, "::": false, "100.64.0.7": false, "example.com": false, "": false} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v; want %v", host, got, want)
		}
	}
}

func TestWithView(t *testing.T) {
	for _, tt := range []struct {
		event, url, id, want string
	}{
		{eventQuestion, "https://box.example:8443/", "12-34", `view, Open the run, "https://box.example:8443/runs/12-34", clear=true`},
		{eventCompleted, "http://100.64.0.7:8080", "12-34", `view, Open the run, "http://100.64.0.7:8080/runs/12-34", clear=true`},
		{eventCompleted, `http://h/a,b;"c`, "1-2", `view, Open the run, "http://h/a,b;%22c/runs/1-2", clear=true`},
		{eventIteration, "https://box.example/", "12-34", ""},
		{eventStopped, "https://box.example/", "12-34", ""},
		{eventQuestion, "", "12-34", ""},
		{eventQuestion, "https://box.example/", "", ""},
	} {
		if got := withView(notification{event: tt.event}, tt.url, tt.id).actions; got != tt.want {
			t.Errorf("withView(%s, %q, %q).actions = %q; want %q", tt.event, tt.url, tt.id, got, tt.want)
		}
	}
}

// TestFileTail: the lines appended since the last read, whole lines only;
// at the start, the last streamBacklog bytes' whole lines; a file emptied
// or replaced by a shorter one is read from its start.
func TestFileTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ev.jsonl")
	write := func(s string, flag int) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flag, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	join := func(lines [][]byte) string {
		var s []string
		for _, l := range lines {
			s = append(s, string(l))
		}
		return strings.Join(s, "|")
	}
	long := strings.Repeat("x", streamBacklog)
	write(long+"\nold\na\nb\nhalf", os.O_TRUNC)
	tail := fileTail{path: path}
	if got := join(tail.lines()); got != "old|a|b" {
		t.Errorf("first lines() = %q; want %q (the backlog's whole lines)", got, "old|a|b")
	}
	if got := join(tail.lines()); got != "" {
		t.Errorf("lines() with nothing new = %q; want none", got)
	}
	write(" done\nc\r\n\nd\n", os.O_APPEND)
	if got := join(tail.lines()); got != "half done|d" {
		t.Errorf("lines() = %q; want %q (no carriage return, no empty line)", got, "half done|d")
	}
	write("new\n", os.O_TRUNC)
	if got := join(tail.lines()); got != "new" {
		t.Errorf("lines() after the file was emptied = %q; want %q", got, "new")
	}
}
