package main

// This file sends notifications: an HTTP POST of text/plain to notifyUrl
// with ntfy-style Title, Priority and Tags headers, for the events the
// user chose (notifyEvents). The rules are:
//
//   - They go out in the background, one at a time, from a bounded queue
//     (a full queue drops the newest, and says so at exit): a slow,
//     failing or unreachable server never slows the loop.
//   - Each request gets notifyTimeout; at exit, the pending ones get
//     notifyExitWait in all, less if a signal comes, then are given up.
//   - A failure is one warning line in the log; after maxNotifyWarnings, the
//     rest are counted, not written. On the screen (tell), one line at the
//     end says how many failed and why, and a wait at exit that lasts says
//     what it waits for.
//   - The URL's credentials never appear anywhere: they are taken out of
//     the URL and sent as an Authorization header, and messages name the
//     URL redacted.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Limits of the notifications.
const (
	notifyQueueSize   = 64
	maxNotifyWarnings = 10
)

// notifyTimeoutEnv overrides notifyTimeout and notifyExitWait (a Go
// duration above 0); tests lengthen them, to look at a run that has ended
// while it still waits for its notifications.
const notifyTimeoutEnv = "CLAUDE_ITERATE_NOTIFY_TIMEOUT"

// notifyTimeout bounds one request; notifyExitWait, at exit, the pending
// ones in all.
var notifyTimeout, notifyExitWait = func() (time.Duration, time.Duration) {
	if d, err := time.ParseDuration(os.Getenv(notifyTimeoutEnv)); err == nil && d > 0 {
		return d, d
	}
	return 5 * time.Second, 5 * time.Second
}()

// notification is one message.
type notification struct {
	event    string
	title    string
	priority string // ntfy's 1 (min) to 5 (urgent)
	tags     string // ntfy's tags: emoji short codes, comma-separated
	body     string
	// actions is ntfy's Actions header: a "view" action to the run's page
	// in 'serve' (withView), or "".
	actions string
}

// notifier sends notifications. A nil *notifier sends nothing.
type notifier struct {
	url        string // without credentials
	shown      string // redacted, for messages
	user, pass string
	auth       bool
	events     map[string]bool // nil: all
	client     *http.Client
	queue      chan notification
	done       chan struct{}
	closed     bool
	pending    atomic.Int64 // queued or being sent
	dropped    atomic.Int64
	silenced   atomic.Bool // after close: write nothing more
	warnings   int         // the sender's goroutine only
	warn       func(msg string)
	// tell writes a line on the screen; nil: nowhere.
	tell func(msg string)
	// queued counts the notifications wanted, failed those that failed,
	// lastFailure says why the last one did.
	queued, failed atomic.Int64
	lastFailure    atomic.Pointer[string]
}

// notifyWaitSilent is how long the wait at exit goes unannounced.
const notifyWaitSilent = 300 * time.Millisecond

// onScreen makes n tell its end-of-run summary with tell.
func (n *notifier) onScreen(tell func(msg string)) {
	if n != nil {
		n.tell = tell
	}
}

// newNotifier starts a notifier for rawURL (already checked), or returns
// nil when there is none. warn writes one line to the log.
func newNotifier(rawURL string, events []string, warn func(msg string)) *notifier {
	if rawURL == "" {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	n := &notifier{shown: redactURL(rawURL), client: &http.Client{Timeout: notifyTimeout},
		queue: make(chan notification, notifyQueueSize), done: make(chan struct{}), warn: warn}
	if u.User != nil {
		n.user, n.auth = u.User.Username(), true
		n.pass, _ = u.User.Password()
		u.User = nil
	}
	n.url = u.String()
	for _, e := range events {
		if e == "all" {
			n.events = nil
			break
		}
		if n.events == nil {
			n.events = map[string]bool{}
		}
		n.events[e] = true
	}
	go n.run()
	return n
}

// wants reports whether n sends notifications of event.
func (n *notifier) wants(event string) bool {
	return n != nil && !n.closed && (n.events == nil || n.events[event])
}

// send queues nt, if its event is wanted; it never blocks.
func (n *notifier) send(nt notification) {
	if !n.wants(nt.event) {
		return
	}
	// Agent text may be quoted; a subscriber may print it to a terminal.
	nt.title, nt.body = sanitizeString(nt.title), sanitizeString(nt.body)
	n.queued.Add(1)
	n.pending.Add(1)
	select {
	case n.queue <- nt:
	default:
		n.pending.Add(-1)
		n.dropped.Add(1)
	}
}

// run sends the queued notifications, one at a time.
func (n *notifier) run() {
	defer close(n.done)
	for nt := range n.queue {
		n.post(nt)
		n.pending.Add(-1)
	}
}

// post sends one notification.
func (n *notifier) post(nt notification) {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, strings.NewReader(nt.body))
	if err != nil {
		n.warnf("notification %s not sent to %s: %v", nt.event, n.shown, n.scrub(err.Error()))
		return
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("Title", headerText(nt.title))
	req.Header.Set("Priority", nt.priority)
	req.Header.Set("Tags", nt.tags)
	if nt.actions != "" {
		req.Header.Set("Actions", nt.actions)
	}
	req.Header.Set("User-Agent", progName+"/"+programVersion())
	if n.auth {
		req.SetBasicAuth(n.user, n.pass)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		n.warnf("notification %s not sent to %s: %s", nt.event, n.shown, n.describe(err))
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		n.warnf("notification %s to %s: the server answered %s", nt.event, n.shown, resp.Status)
	}
}

// describe says why a request failed, without the URL (a *url.Error
// carries it, credentials and all).
func (n *notifier) describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err) {
		return fmt.Sprintf("no answer within %s", notifyTimeout)
	}
	return n.scrub(err.Error())
}

// scrub blots out the credentials, should a message carry them.
func (n *notifier) scrub(s string) string {
	for _, secret := range []string{n.pass, n.user} {
		if len(secret) >= 3 {
			s = strings.ReplaceAll(s, secret, "xxxxx")
		}
	}
	return s
}

func (n *notifier) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	n.failed.Add(1)
	why := msg
	if _, after, ok := strings.Cut(msg, n.shown+": "); ok {
		why = after
	}
	n.lastFailure.Store(&why)
	if n.silenced.Load() {
		return
	}
	n.warnings++
	switch {
	case n.warnings <= maxNotifyWarnings:
		n.warn(msg)
	case n.warnings == maxNotifyWarnings+1:
		n.warn("more notifications failed; further failures are not logged")
	}
}

// close stops taking notifications and waits up to wait (or until abort)
// for the pending ones; those left are given up, with a warning.
func (n *notifier) close(wait time.Duration, abort <-chan os.Signal) {
	if n == nil || n.closed {
		return
	}
	n.closed = true
	close(n.queue)
	t := time.NewTimer(wait)
	defer t.Stop()
	silent := time.NewTimer(notifyWaitSilent)
	defer silent.Stop()
	why := ""
wait:
	for {
		select {
		case <-n.done:
			break wait
		case <-silent.C:
			if p := n.pending.Load(); p > 0 && n.tell != nil {
				n.tell(fmt.Sprintf("waiting up to %s for %s to %s to be sent", wait, plural(int(p), "notification"), n.shown))
			}
		case <-t.C:
			why = fmt.Sprintf("gave up after %s at exit", wait)
			break wait
		case sig := <-abort:
			why = "gave up at exit on " + signalName(sig)
			break wait
		}
	}
	left := n.pending.Load()
	defer n.summarize(left, why)
	if d := n.dropped.Load(); d > 0 {
		n.warn(fmt.Sprintf("%s dropped: more than %d were waiting to be sent", plural(int(d), "notification"), notifyQueueSize))
	}
	if why != "" && left > 0 {
		n.warn(fmt.Sprintf("%s not sent to %s: %s", plural(int(left), "notification"), n.shown, why))
	}
	n.silenced.Store(true)
}

// summarize tells, once at the end, how many notifications failed and why:
// those that failed, were dropped, or were given up (left, why) at exit.
func (n *notifier) summarize(left int64, why string) {
	failed := n.failed.Load() + n.dropped.Load()
	last := ""
	if p := n.lastFailure.Load(); p != nil {
		last = *p
	}
	if why != "" && left > 0 {
		failed += left
		last = why
	} else if n.dropped.Load() > 0 && last == "" {
		last = fmt.Sprintf("more than %d were waiting to be sent", notifyQueueSize)
	}
	if failed == 0 || n.tell == nil {
		return
	}
	total := n.queued.Load()
	if failed > total {
		failed = total
	}
	n.tell(fmt.Sprintf("warning: %d of %s to %s failed (last: %s); details in the log", failed, plural(int(total), "notification"), n.shown, last))
}

// servePagePath is where 'serve' shows one run's page: servePagePath+id.
const servePagePath = "/runs/"

// withView is nt with ntfy's "view" action that opens the page of run id
// in 'serve', reached at serveURL (config serve.url), when nt is a question
// or a completion: a phone gets to the answer button in one tap.
func withView(nt notification, serveURL, id string) notification {
	if serveURL == "" || id == "" || (nt.event != eventQuestion && nt.event != eventCompleted) {
		return nt
	}
	// The simple header format splits on commas and semicolons: the URL
	// is quoted, and a quote in it escaped (checkNotifyURL refused spaces).
	u := strings.TrimRight(serveURL, "/") + servePagePath + url.PathEscape(id)
	nt.actions = `view, Open the run, "` + strings.ReplaceAll(u, `"`, "%22") + `", clear=true`
	return nt
}

// headerText makes s a header value: one line, printable, and RFC 2047
// encoded when it is not ASCII (ntfy decodes it).
func headerText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	for _, r := range s {
		if r >= 0x80 {
			return mime.QEncoding.Encode("utf-8", s)
		}
	}
	return s
}
