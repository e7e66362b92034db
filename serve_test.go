package main

// This file holds the scenarios' commands for serve: a plain HTTP client,
// and event-stream clients that read, or never read.
//
//	serveurl                 wait for a serve listening, and read the URL
//	                         it keeps in the state directory: $SERVE_URL
//	                         (http://host:port), $SERVE_TOKEN, $SERVE_PAGE
//	                         (the URL printed); its pid in serve.pid
//	http [-H 'K: V']... [-d BODY] METHOD URL
//	                         one request, no redirect followed; prints
//	                         "HTTP <code>", the headers of interest, an
//	                         empty line, and the body
//	envmatch NAME FILE REGEXP
//	                         set $NAME to the first group of REGEXP's
//	                         first match in FILE (a run's id, from ps)
//	streams read|stall N URL [-H 'K: V']... [-o FILE]
//	                         open N event streams, reading and dropping
//	                         what comes (the first one's copied to FILE),
//	                         or never reading anything (a receive buffer
//	                         of a few KiB); they stay open until the
//	                         scenario ends
//	peakrss PIDFILE MIB      fail if the live process's peak resident
//	                         memory (Linux's VmHWM) passed MIB; not
//	                         checked under -race, nor without /proc
//
// Every request and stream ends when the scenario does.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// serveHeaders are the answer's headers http prints.
var serveHeaders = []string{"Content-Security-Policy", "Content-Type", "Location", "Set-Cookie", "Www-Authenticate", "X-Frame-Options"}

func serveCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"serveurl": cmdServeURL,
		"http":     cmdHTTP,
		"streams":  cmdStreams,
		"envmatch": cmdEnvMatch,
		"peakrss":  cmdPeakRSS,
		"browser":  cmdBrowser, // browser_test.go
	}
}

func cmdServeURL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: serveurl")
	}
	// The file of an earlier serve may be there: wait for a serve that
	// is alive and listening.
	path := filepath.Join(ts.Getenv("XDG_STATE_HOME"), "claude-iterate", serveFile)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var info serveInfo
		data, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(data, &info) == nil && info.PID > 0 && syscall.Kill(info.PID, 0) == nil {
			if u, err := url.Parse(info.URL); err == nil {
				if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
					c.Close()
					ts.Setenv("SERVE_URL", u.Scheme+"://"+u.Host)
					ts.Setenv("SERVE_TOKEN", info.Token)
					ts.Setenv("SERVE_PAGE", info.URL)
					ts.Check(os.WriteFile(ts.MkAbs("serve.pid"), []byte(strconv.Itoa(info.PID)+"\n"), 0o644))
					return
				}
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("serveurl: no serve listening (%s: %s)", path, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func cmdEnvMatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: envmatch NAME FILE REGEXP")
	}
	re, err := regexp.Compile(args[2])
	if err != nil || re.NumSubexp() < 1 {
		ts.Fatalf("envmatch: want a regular expression with a group: %q", args[2])
	}
	m := re.FindStringSubmatch(ts.ReadFile(args[1]))
	if m == nil {
		ts.Fatalf("envmatch: no match for %q in %s", args[2], args[1])
	}
	ts.Setenv(args[0], m[1])
}

func cmdPeakRSS(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: peakrss PIDFILE MIB")
	}
	limit, err := strconv.Atoi(args[1])
	if err != nil || limit <= 0 {
		ts.Fatalf("peakrss: bad limit %q", args[1])
	}
	pid := strings.TrimSpace(ts.ReadFile(args[0]))
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		ts.Logf("peakrss: not checked: %v", err)
		return
	}
	var kib int
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Sscan(v, &kib)
		}
	}
	ts.Logf("process %s: peak resident memory %d MiB (limit %d)", pid, kib>>10, limit)
	if kib == 0 {
		ts.Fatalf("peakrss: no VmHWM in /proc/%s/status", pid)
	}
	if !raceBuild && kib>>10 > limit {
		ts.Fatalf("process %s took %d MiB of memory at its peak; the most is %d", pid, kib>>10, limit)
	}
}

// httpArgs parses -H, -d (BODY, or @FILE) and -o options before the rest.
func httpArgs(ts *testscript.TestScript, args []string) (hdr http.Header, body string, rest []string) {
	hdr = http.Header{}
	for len(args) >= 2 && (args[0] == "-H" || args[0] == "-d" || args[0] == "-o") {
		if args[0] == "-d" || args[0] == "-o" {
			body = args[1]
			if name, ok := strings.CutPrefix(body, "@"); ok && args[0] == "-d" {
				body = ts.ReadFile(name) // -d @FILE: the body from a file
			}
		} else {
			k, v, ok := strings.Cut(args[1], ":")
			if !ok {
				ts.Fatalf("http: bad header %q", args[1])
			}
			hdr.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		args = args[2:]
	}
	return hdr, body, args
}

func cmdHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: http [-H 'K: V']... [-d BODY] METHOD URL")
	}
	hdr, body, rest := httpArgs(ts, args)
	if len(rest) != 2 {
		ts.Fatalf("usage: http [-H 'K: V']... [-d BODY] METHOD URL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, rest[0], rest[1], strings.NewReader(body))
	if err != nil {
		ts.Fatalf("http: %v", err)
	}
	req.Header = hdr
	if h := hdr.Get("Host"); h != "" {
		req.Host = h
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		ts.Fatalf("http: %v", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d\n", resp.StatusCode)
	for _, h := range serveHeaders {
		for _, v := range resp.Header.Values(h) {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	fmt.Fprintf(&b, "\n%s", data)
	fmt.Fprint(ts.Stdout(), b.String())
}

func cmdStreams(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || (args[0] != "read" && args[0] != "stall") {
		ts.Fatalf("usage: streams read|stall N URL [-H 'K: V']... [-o FILE]")
	}
	var n int
	if _, err := fmt.Sscan(args[1], &n); err != nil || n <= 0 {
		ts.Fatalf("streams: bad count %q", args[1])
	}
	u, err := url.Parse(args[2])
	if err != nil {
		ts.Fatalf("streams: %v", err)
	}
	hdr, copyTo, rest := httpArgs(ts, args[3:])
	if len(rest) != 0 {
		ts.Fatalf("usage: streams read|stall N URL [-H 'K: V']... [-o FILE]")
	}
	var copyFile *os.File
	if copyTo != "" {
		f, err := os.Create(ts.MkAbs(copyTo))
		ts.Check(err)
		copyFile = f
	}
	stall := args[0] == "stall"
	d := net.Dialer{Timeout: 10 * time.Second}
	if stall {
		// A small window: the server's writes soon wait on this client.
		d.Control = func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c, err := d.Dial("tcp", u.Host)
		if err != nil {
			ts.Fatalf("streams: %v", err)
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		var req strings.Builder
		fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n", u.RequestURI(), u.Host)
		for k, vs := range hdr {
			for _, v := range vs {
				fmt.Fprintf(&req, "%s: %s\r\n", k, v)
			}
		}
		req.WriteString("\r\n")
		if _, err := io.WriteString(c, req.String()); err != nil {
			ts.Fatalf("streams: %v", err)
		}
		if stall {
			continue
		}
		br := bufio.NewReader(c)
		status, err := br.ReadString('\n')
		if err != nil || !strings.Contains(status, " 200 ") {
			ts.Fatalf("streams: the stream answered %q (%v)", strings.TrimSpace(status), err)
		}
		var to io.Writer = io.Discard
		if i == 0 && copyFile != nil {
			to = copyFile
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(to, br)
		}()
	}
	ts.Defer(func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
		if copyFile != nil {
			copyFile.Close()
		}
	})
}
