package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStatusWatch(t *testing.T) {
	path, write := statusWriter(t)
	write(`{"progress":{"completed":30,"total":60},"summary":"start","lastUpdated":"2025-01-01T00:00:00Z"}`)
	for _, meaningful := range []bool{true, false} {
		w := newStatusWatch(path, 2*time.Second, meaningful)
		start, _ := readStatusCopy(path)
		if ts, ok := w.prime(start); !ok || ts.Completed != 30 {
			t.Fatalf("prime = %+v, %v", ts, ok)
		}
		now := time.Now()
		poll := func(at time.Duration, want string) {
			t.Helper()
			msg, _, ok := w.poll(now.Add(at))
			if got := map[bool]string{true: msg, false: "-"}[ok]; got != want {
				t.Errorf("meaningful=%v: poll at %s = %q; want %q", meaningful, at, got, want)
			}
		}
		poll(0, "-") // unchanged since prime
		write(`{"progress":{"completed":35,"total":60},"summary":"Migrated the user endpoints","lastUpdated":"2025-01-01T00:00:05Z"}`)
		poll(time.Second, "-")   // seen: settles for 2s
		poll(2*time.Second, "-") // not yet settled, and not stat'ed again yet
		poll(3*time.Second, "35/60 items (+5) - Migrated the user endpoints")
		write(`{"progress":{"completed":35,"total":60},"summary":"Migrated the user endpoints","lastUpdated":"2025-01-01T00:00:09Z"}`)
		poll(4*time.Second, "-")
		want := "-"
		if !meaningful {
			want = "35/60 items - Migrated the user endpoints"
		}
		poll(6*time.Second, want)
		write(`{"complete":true,"progress":{"completed":60,"total":60},"summary":"done"}`)
		poll(7*time.Second, "-")
		poll(9*time.Second, "60/60 items (+25) - done ✅ Complete!")
		write(`{"progress":`) // half written: skipped until it changes again
		poll(10*time.Second, "-")
		poll(12*time.Second, "-")
		os.Remove(path)
		poll(13*time.Second, "-")
		write(`{"progress":{"completed":30,"total":60},"summary":"start","lastUpdated":"2025-01-01T00:00:00Z"}`)
	}
}

// TestStatusWatchFinal: the look at an iteration's end tells a change at
// once, whether poll has seen it (settling) or not, and only a change; it
// judges the copy the iteration read (after), never the file itself: it
// costs no stat nor read of its own.
func TestStatusWatchFinal(t *testing.T) {
	path, write := statusWriter(t)
	read := func() statusCopy {
		c, _ := readStatusCopy(path)
		return c
	}
	write(`{"progress":{"completed":1,"total":3}}`)
	first := read()
	w := newStatusWatch(path, time.Hour, true)
	if ts, ok := w.prime(first); !ok || ts.Completed != 1 {
		t.Fatalf("prime = %+v, %v", ts, ok)
	}
	now := time.Now()
	look := func(what string, got func() (string, taskStatus, bool), want string) {
		t.Helper()
		msg, _, ok := got()
		if g := map[bool]string{true: msg, false: "-"}[ok]; g != want {
			t.Errorf("%s = %q; want %q", what, g, want)
		}
	}
	final := func() (string, taskStatus, bool) { return w.final(now, read()) }
	look("final, unchanged", final, "-")
	write(`{"progress":{"completed":2,"total":3}}`)
	look("final, the copy read before the change", func() (string, taskStatus, bool) { return w.final(now, first) }, "-")
	look("final, never polled", final, "2/3 items (+1)")
	look("final again", final, "-")
	write(`{"progress":{"completed":3,"total":3},"complete":true}`)
	look("poll", func() (string, taskStatus, bool) { return w.poll(now.Add(2 * time.Second)) }, "-") // settling for an hour
	look("final, settling", final, "3/3 items (+1) ✅ Complete!")
	look("poll after", func() (string, taskStatus, bool) { return w.poll(now.Add(time.Hour + 3*time.Second)) }, "-")
	write(`{"progress":`)
	look("final, half written", final, "-")
	look("poll, half written", func() (string, taskStatus, bool) { return w.poll(now.Add(2 * time.Hour)) }, "-")
	os.Remove(path)
	look("final, removed", final, "-")
	write(`{"progress":{"completed":3,"total":3},"complete":true}`)
	look("final, written again as last told", final, "-")
	var none *statusWatch
	if _, _, ok := none.final(now, first); ok {
		t.Error("a nil watch reported a change")
	}
}

func TestEndEvent(t *testing.T) {
	for _, tc := range []struct {
		end   ending
		event string
	}{
		{ending{code: exitOK, status: statusCompleted}, "completion"},
		{ending{code: exitOK, status: statusStopped}, "stopped"},
		{ending{code: 143, status: statusInterrupted, signal: os.Interrupt}, "stopped"},
		{ending{code: exitError, status: statusFailed, hint: "look"}, "error"},
	} {
		ev := endEvent(tc.end, "the summary")
		ev.Workspace = "ws"
		nt := notificationFor(ev)
		if ev.Event != tc.event || nt.event != tc.event {
			t.Errorf("endEvent(%+v).Event = %q, notification %q; want %q", tc.end, ev.Event, nt.event, tc.event)
		}
		if tc.end.hint != "" && nt.body != "the summary\nhint: look" {
			t.Errorf("notification body %q: want the hint", nt.body)
		}
	}
	if got := headerText("ws: ünïcode\nline"); got != "=?utf-8?q?ws:_=C3=BCn=C3=AFcode_line?=" {
		t.Errorf("headerText = %q", got)
	}
}

// statusWriter returns the path of a status file in a new directory, and a
// function that writes it.
func statusWriter(t *testing.T) (path string, write func(string)) {
	path = filepath.Join(t.TempDir(), statusFile)
	return path, func(s string) {
		t.Helper()
		if err := writeFileAtomic(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
