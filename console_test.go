package main

import (
	"bufio"
	"bytes"
	"os/signal"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// TestPanelNarrowedNearTheTop: a panel near the top of a mostly empty
// screen, narrowed so that its lines wrap onto more rows than there are
// above it (tmux, seen by hand: the rows pushed into the scrollback by the
// re-wrap are out of reach). Erasing it must not erase the whole screen
// from its top left, which tmux first copies into the scrollback: a whole
// stale panel at every redraw. What the re-wrap pushed out stays (one
// fragment); the redraws add nothing.
func TestPanelNarrowedNearTheTop(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	resize := func(cols int) {
		if err := pty.Setsize(ptmx, &pty.Winsize{Cols: uint16(cols), Rows: 12}); err != nil {
			t.Fatal(err)
		}
	}
	resize(100)
	var out bytes.Buffer
	c := &console{out: bufio.NewWriter(&out), tty: tty, fancy: true, foreground: true}
	vt := newTmuxScreen(100, 12)
	feed := func() { // through the terminal's output processing (ONLCR)
		vt.write(bytes.ReplaceAll(out.Bytes(), []byte("\n"), []byte("\r\n")))
		out.Reset()
	}
	draw := func(n int) {
		panel := []string{
			"● running iteration 1  [░░░░░░░░░░░░░░░░░░░░]  0/8 (0%)",
			"Elapsed " + strings.Repeat("1", n) + "s · Mode loop · Cost $0.00 · updated 1s ago",
			"Now: Bash: go test ./... -run TestSomethingExtremelyLongToMakeTheLineWrapAcrossManyRowsOfANarrowWindow",
			"Press s to toggle stop",
		}
		c.setPanel(panel)
		feed()
	}
	t.Cleanup(func() {
		if c.winch != nil {
			signal.Stop(c.winch)
		}
	})
	c.progressf("Running demo (loop mode, up to 8 iterations)")
	c.settle() // said lines are written by the console's writer goroutine: wait for it before reading out
	feed()
	draw(1)
	resize(25)
	vt.resize(25)
	draw(1)
	after1 := strings.Count(vt.text(), "● running")
	for n := 2; n <= 5; n++ {
		draw(n)
	}
	if got := strings.Count(vt.text(), "● running"); got != after1 || got > 2 {
		t.Errorf("the panel's first line is %d times on screen and in the scrollback after 5 redraws (%d after 1); want it once, and once in what the re-wrap pushed out:\n%s", got, after1, vt.text())
	}
	if !strings.Contains(vt.text(), "Running demo") {
		t.Errorf("the line above the panel is gone:\n%s", vt.text())
	}
}

// TestSayNeverWaits: a line said while the console is held (a write to a
// terminal that does not drain holds it) is queued, and the sayer goes
// on; the holder writes the queued lines, in order, as it lets go, before
// anything later; settle waits until everything said is written.
func TestSayNeverWaits(t *testing.T) {
	var out, errs bytes.Buffer
	c := &console{out: bufio.NewWriter(&out), err: &errs, level: outputProgress}
	c.mu.Lock() // a writer stuck on the terminal
	said := make(chan struct{})
	go func() {
		c.progressf("one")
		c.errorf("two")
		c.rawf("three")
		close(said)
	}()
	<-said // no deadlock: nothing waited for the console
	if out.Len() != 0 || errs.Len() != 0 {
		t.Fatalf("written while the console was held: %q %q", out.String(), errs.String())
	}
	c.unlock()
	if got := out.String(); got != "one\n" {
		t.Errorf("stdout %q; want the line said", got)
	}
	if got, want := errs.String(), progName+": two\nthree\n"; got != want {
		t.Errorf("stderr %q; want %q", got, want)
	}
	c.progressf("four") // a free console: written by the writer goroutine
	c.settle()
	if got := out.String(); got != "one\nfour\n" {
		t.Errorf("stdout %q after a line said to a free console", got)
	}
}

// TestSaidComesFirst: what was said before a write to the console is
// written before it, whoever takes the console first (here the verbose
// transcript's writer, the console's own writer goroutine kept out).
func TestSaidComesFirst(t *testing.T) {
	var out bytes.Buffer
	c := &console{out: bufio.NewWriter(&out), err: &out, level: outputVerbose}
	c.q.once.Do(func() {}) // no writer goroutine: nothing writes the queue but a holder
	c.progressf("said first")
	tw := &teeWriter{c: c}
	tw.Write([]byte("transcript\n"))
	tw.Flush()
	if got, want := out.String(), "said first\ntranscript\n"; got != want {
		t.Errorf("%q; want %q", got, want)
	}
}
