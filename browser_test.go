package main

// This file drives a real headless browser (Debian's chromium) for the
// scenarios of serve's page: it loads the real page from the real server,
// runs its real script, and clicks and types as a person does. It speaks
// the Chrome DevTools Protocol over --remote-debugging-pipe (JSON messages
// separated by NUL bytes on file descriptors 3 and 4), so that the driver
// is a few lines of the standard library: no websocket, no module.
//
//	[browser]                      the condition: a browser is installed
//	                               ($CLAUDE_ITERATE_BROWSER, chromium,
//	                               chromium-browser, google-chrome); with
//	                               $CLAUDE_ITERATE_REQUIRE_BROWSER=1 (CI)
//	                               a missing one fails the scenario
//	browser open URL               start the browser (once), load URL
//	browser wait JS [SECONDS]      wait until the expression is truthy
//	                               (default 30 s)
//	browser click SELECTOR         a mouse click at the element's centre
//	browser type SELECTOR TEXT     focus the element, type TEXT
//	browser eval JS                print the expression's value
//
// The browser runs in its own process group, killed when the script ends.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// browserPath is the headless browser to drive, "" when there is none.
func browserPath() string {
	if p := os.Getenv("CLAUDE_ITERATE_BROWSER"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browserCondition is the [browser] condition.
func browserCondition() (bool, error) {
	if browserPath() != "" {
		return true, nil
	}
	if os.Getenv("CLAUDE_ITERATE_REQUIRE_BROWSER") == "1" {
		return false, errors.New("no headless browser (chromium) installed, and $CLAUDE_ITERATE_REQUIRE_BROWSER=1: install it (apt-get install chromium)")
	}
	return false, nil
}

// cdp is a browser driven through the DevTools protocol.
type cdp struct {
	cmd     *exec.Cmd
	in      *os.File // the browser's fd 3: our requests
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpReply
	session string
	dead    chan struct{}
}

// cdpReply is the answer to one request.
type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

var browsers sync.Map // *testscript.TestScript → *cdp

// startBrowser starts the browser, attached to its page.
func startBrowser(ts *testscript.TestScript) *cdp {
	path := browserPath()
	if path == "" {
		ts.Fatalf("browser: no headless browser installed")
	}
	toR, toW, err := os.Pipe()
	if err != nil {
		ts.Fatalf("browser: %v", err)
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		ts.Fatalf("browser: %v", err)
	}
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-background-networking", "--remote-debugging-pipe",
		"--user-data-dir="+ts.MkAbs(".browser"), "--window-size=390,844", "about:blank")
	cmd.ExtraFiles = []*os.File{toR, fromW} // fd 3 and 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logf, err := os.Create(ts.MkAbs("browser.log"))
	if err != nil {
		ts.Fatalf("browser: %v", err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		ts.Fatalf("browser: starting %s: %v", path, err)
	}
	toR.Close()
	fromW.Close()
	logf.Close()
	b := &cdp{cmd: cmd, in: toW, waiting: map[int]chan cdpReply{}, dead: make(chan struct{})}
	go b.read(fromR)
	go func() {
		cmd.Wait()
		close(b.dead)
	}()
	ts.Defer(func() {
		toW.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-b.dead
	})
	var targets struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	b.call(ts, "", "Target.getTargets", nil, &targets)
	page := ""
	for _, t := range targets.TargetInfos {
		if t.Type == "page" {
			page = t.TargetID
		}
	}
	if page == "" {
		ts.Fatalf("browser: no page")
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.call(ts, "", "Target.attachToTarget", map[string]any{"targetId": page, "flatten": true}, &att)
	b.session = att.SessionID
	b.call(ts, b.session, "Page.enable", nil, nil)
	return b
}

// read hands each message to the request that waits for it; events are
// dropped.
func (b *cdp) read(r *os.File) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID int `json:"id"`
			cdpReply
		}
		if json.Unmarshal(bytes.TrimSuffix(msg, []byte{0}), &m) != nil || m.ID == 0 {
			continue
		}
		b.mu.Lock()
		ch := b.waiting[m.ID]
		delete(b.waiting, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m.cdpReply
		}
	}
}

// call sends one request and decodes its result into out (nil: ignored).
func (b *cdp) call(ts *testscript.TestScript, session, method string, params any, out any) {
	if err := b.try(session, method, params, out); err != nil {
		log, _ := os.ReadFile(ts.MkAbs("browser.log"))
		ts.Fatalf("browser: %s: %v; browser.log:\n%s", method, err, log)
	}
}

// try is call, returning its error.
func (b *cdp) try(session, method string, params any, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpReply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	req := map[string]any{"id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	if session != "" {
		req["sessionId"] = session
	}
	data, _ := json.Marshal(req)
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return errors.New(r.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-b.dead:
		return errors.New("the browser exited")
	case <-time.After(30 * time.Second):
		return errors.New("no answer in 30s")
	}
}

// eval evaluates a JavaScript expression in the page, awaiting a promise;
// its value comes back as JSON.
func (b *cdp) eval(expr string) (json.RawMessage, error) {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := b.try(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if err != nil {
		return nil, err
	}
	if e := r.ExceptionDetails; e != nil {
		if e.Exception != nil {
			return nil, errors.New(e.Exception.Description)
		}
		return nil, errors.New(e.Text)
	}
	return r.Result.Value, nil
}

func cmdBrowser(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: browser open URL | wait JS [SECONDS] | click SELECTOR | type SELECTOR TEXT | eval JS")
	}
	v, ok := browsers.Load(ts)
	if !ok {
		if args[0] != "open" {
			ts.Fatalf("browser: open a page first")
		}
		v = startBrowser(ts)
		browsers.Store(ts, v)
		ts.Defer(func() { browsers.Delete(ts) })
	}
	b := v.(*cdp)
	switch args[0] {
	case "open":
		b.call(ts, b.session, "Page.navigate", map[string]any{"url": args[1]}, nil)
		b.waitFor(ts, `document.readyState === "complete"`, 30*time.Second)
	case "wait":
		limit := 30 * time.Second
		if len(args) == 3 {
			n, err := strconv.Atoi(args[2])
			if err != nil {
				ts.Fatalf("browser wait: bad seconds %q", args[2])
			}
			limit = time.Duration(n) * time.Second
		}
		b.waitFor(ts, args[1], limit)
	case "click":
		b.click(ts, args[1])
	case "type":
		if len(args) != 3 {
			ts.Fatalf("usage: browser type SELECTOR TEXT")
		}
		sel, _ := json.Marshal(args[1])
		if _, err := b.eval(fmt.Sprintf(`document.querySelector(%s).focus()`, sel)); err != nil {
			ts.Fatalf("browser type %s: %v", args[1], err)
		}
		b.call(ts, b.session, "Input.insertText", map[string]any{"text": args[2]}, nil)
	case "eval":
		val, err := b.eval(args[1])
		if err != nil {
			ts.Fatalf("browser eval: %v", err)
		}
		var s string
		if json.Unmarshal(val, &s) != nil {
			s = string(val)
		}
		fmt.Fprintln(ts.Stdout(), s)
	default:
		ts.Fatalf("browser: unknown subcommand %q", args[0])
	}
}

// waitFor waits until expr is truthy in the page: the page's own script
// works at its own pace, and the test waits for what it shows.
func (b *cdp) waitFor(ts *testscript.TestScript, expr string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	var last error
	for {
		val, err := b.eval("!!(" + expr + ")")
		if err == nil && string(val) == "true" {
			return
		}
		last = err
		if time.Now().After(deadline) {
			body, _ := b.eval(`document.body ? document.body.innerText : ""`)
			ts.Fatalf("browser: %s not true after %s (last error: %v); the page shows:\n%s", expr, limit, last, body)
		}
		select {
		case <-b.dead:
			ts.Fatalf("browser: the browser exited (see browser.log)")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// click clicks at the centre of the element, as a mouse does: the page
// gets the pointer events, and its own handlers decide.
func (b *cdp) click(ts *testscript.TestScript, selector string) {
	sel, _ := json.Marshal(selector)
	b.waitFor(ts, fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false; e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && !e.disabled; })()`, sel), 30*time.Second)
	val, err := b.eval(fmt.Sprintf(`(() => { const r = document.querySelector(%s).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, sel))
	if err != nil {
		ts.Fatalf("browser click %s: %v", selector, err)
	}
	var xy [2]float64
	if err := json.Unmarshal(val, &xy); err != nil {
		ts.Fatalf("browser click %s: %v", selector, err)
	}
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		b.call(ts, b.session, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": xy[0], "y": xy[1], "button": "left", "clickCount": 1}, nil)
	}
}

// TestBrowserCondition: without a browser, [browser] is false (the
// scenario skips), unless CI requires one: then it is an error (the
// scenario fails).
func TestBrowserCondition(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CLAUDE_ITERATE_BROWSER", "")
	t.Setenv("CLAUDE_ITERATE_REQUIRE_BROWSER", "")
	if ok, err := browserCondition(); ok || err != nil {
		t.Errorf("browserCondition() = %v, %v; want false, nil", ok, err)
	}
	t.Setenv("CLAUDE_ITERATE_REQUIRE_BROWSER", "1")
	if ok, err := browserCondition(); ok || err == nil {
		t.Errorf("browserCondition() with CLAUDE_ITERATE_REQUIRE_BROWSER=1 = %v, %v; want false, an error", ok, err)
	}
}
