package main

// This file implements the run's console output. The rules are: quiet prints
// errors only; progress (the default) prints a line at each iteration's start
// and end and the run's last line; verbose adds the agent's transcript. On a
// terminal (stdout a terminal, TERM not dumb) a live panel is
// kept below the scrolling lines: erased before anything scrolls, drawn
// again after it, erased before the tool suspends, never drawn while the
// tool is in the background, and dropped for good before the run's last
// line. Otherwise plain lines: no cursor movement, no colour. Everything
// written goes through the sanitizer: agent text never drives the terminal.
// Diagnostics go to stderr as "claude-iterate: …"; the run's last line,
// saying why it ended, too.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// console is the run's output; safe for concurrent use. Everything for
// stdout goes through one buffer, so that the agent's transcript costs no
// system call per line; the transcript is flushed whenever the agent's
// output pauses (see readLines, child.go), every other message at once.
type console struct {
	mu sync.Mutex
	// q is what was said (say, queuePanel) and not yet written.
	q     sayQueue
	out   *bufio.Writer
	dest  io.Writer // what out writes to
	err   io.Writer
	level string
	// tty is stdout when it is a terminal.
	tty *os.File
	// fancy allows in-place updates (a terminal that is not dumb); color,
	// SGR colours too (and no NO_COLOR: by its convention it turns off
	// colour only).
	fancy, color bool

	// panel is the block kept below the scrolling lines (nil: none), drawn
	// is what of it is on screen (nil: nothing).
	panel, drawn []string
	// held keeps the panel off the screen until the next setPanel: the
	// tool is about to suspend, or came back and does not know yet whether
	// it is in the foreground.
	held bool
	// foreground is whether the tool's group owns the terminal, refreshed
	// by refreshForeground.
	foreground bool
	// resized is set by SIGWINCH, for a redraw.
	resized atomic.Bool
	winch   chan os.Signal
	// onLine is told of every scrolling line (not the transcript): the
	// state file keeps the last ones for watch.
	onLine func(line string)
	// waitLine keeps the panel off the screen until a line has scrolled:
	// a run's first frame comes under its header line, not above it.
	waitLine bool
	// gaveUp is set when the exit gave up on an output that does not
	// drain (settleOr).
	gaveUp atomic.Bool
	lost   lossState // out and err lost (consolelost.go)
}

func newConsole(out, errw io.Writer, level string) *console {
	dest := holdInBackground(out)
	c := &console{dest: dest, err: holdInBackground(errw), level: level}
	c.watchLoss()
	if f, ok := out.(*os.File); ok && isTerminal(f) && os.Getenv("TERM") != "dumb" {
		c.fancy, c.tty, c.waitLine = true, f, true
		c.color = colorTerm(os.Getenv("TERM"), os.Getenv("COLORTERM")) && os.Getenv("NO_COLOR") == ""
		c.refreshForeground()
	}
	return c
}

// releaseHeld writes what was held while the tool was in the background of
// a tostop terminal (ttyhold.go), once it is in the foreground again; with
// all set (at exit), whatever the foreground, and before it returns.
// Without all (the supervisor's look-around), it does nothing when nothing
// is held, and otherwise leaves the writing to the console's writer
// goroutine: a terminal that does not drain never stops the supervisor.
func (c *console) releaseHeld(all bool) {
	if c.gaveUp.Load() {
		return
	}
	if all {
		c.release(true)
		return
	}
	if held, _ := c.holding(); !held {
		return
	}
	c.q.mu.Lock()
	c.q.release = true
	c.q.mu.Unlock()
	c.wakeWriter()
}

// release writes what was held (releaseHeld).
func (c *console) release(all bool) {
	c.lock()
	c.out.Flush()
	c.unlock()
	for _, w := range []io.Writer{c.dest, c.err} {
		if h, ok := w.(*ttyHold); ok {
			if all {
				h.releaseAll()
			} else {
				h.release()
			}
		}
	}
}

// holding reports whether output is being held in the background, without
// waiting; known is false while a write to the terminal is under way.
func (c *console) holding() (held, known bool) {
	known = true
	for _, w := range []io.Writer{c.dest, c.err} {
		if h, ok := w.(*ttyHold); ok {
			hw, k := h.holdingNow()
			held, known = held || hw, known && k
		}
	}
	return held, known
}

// colorTermPrefixes start the terminal types that have colours.
var colorTermPrefixes = []string{"xterm", "screen", "tmux", "rxvt", "linux", "alacritty", "kitty", "foot", "wezterm", "ansi", "cygwin", "konsole", "putty", "st-", "iterm", "contour", "ghostty"}

// colorTerm reports whether a terminal of type term has colours: COLORTERM
// set, a type that says "color", one of colorTermPrefixes, "st", or a VT
// type whose number ends in 0 before a dash ("vt100-…", "vt220-…").
func colorTerm(term, colorterm string) bool {
	if colorterm != "" || term == "st" || strings.Contains(term, "color") {
		return true
	}
	for _, p := range colorTermPrefixes {
		if strings.HasPrefix(term, p) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(term, "vt"); ok {
		digits := strings.TrimLeft(rest, "0123456789")
		return len(digits) < len(rest) && rest[len(rest)-len(digits)-1] == '0' && strings.HasPrefix(digits, "-")
	}
	return false
}

// terminalWidth returns f's width in columns (80 when unknown).
func terminalWidth(f *os.File) int {
	cols, _ := terminalSize(f)
	return cols
}

// terminalSize returns f's width and height (80 by 24 when unknown).
func terminalSize(f *os.File) (cols, rows int) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 80, 24
	}
	var ws struct{ row, col, x, y uint16 }
	var errno syscall.Errno
	if rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	}) != nil || errno != 0 || ws.col == 0 {
		return 80, 24
	}
	if ws.row == 0 {
		ws.row = 24
	}
	return int(ws.col), int(ws.row)
}

// panelWanted reports whether this output keeps a live panel.
func (c *console) panelWanted() bool {
	return c.fancy && c.level != outputQuiet
}

// watchResize notes the terminal's resizes (SIGWINCH), for a redraw. The
// goroutine sleeps until a resize: it adds no wake-ups.
func (c *console) watchResize() {
	if c.winch != nil || c.tty == nil {
		return
	}
	c.winch = make(chan os.Signal, 1)
	signal.Notify(c.winch, syscall.SIGWINCH)
	go func() {
		for range c.winch {
			c.resized.Store(true)
		}
	}()
}

// takeResized reports whether the width changed since the last call.
func (c *console) takeResized() bool {
	return c.resized.Swap(false)
}

// termWidth is the terminal's width now. It is asked each time, not kept
// from the last SIGWINCH: erasing the panel with a width the terminal no
// longer has would leave fragments behind.
func (c *console) termWidth() int {
	if c.tty == nil {
		return 80
	}
	return terminalWidth(c.tty)
}

// refreshForeground notes whether the tool is in the terminal's
// foreground; a background job draws no panel.
func (c *console) refreshForeground() {
	if c.tty == nil {
		return
	}
	fg := c.foregroundNow()
	c.lock()
	c.foreground = fg
	c.unlock()
}

// foregroundNow reports whether the tool's group owns the terminal (c.tty
// set).
func (c *console) foregroundNow() bool {
	pg, err := foregroundGroup(c.tty)
	return err == nil && pg == syscall.Getpgrp()
}

// setPanel shows lines as the panel, in place of the previous ones.
func (c *console) setPanel(lines []string) {
	c.lock()
	defer c.unlock()
	c.showPanel(lines)
}

// queuePanel is setPanel for the run's supervisor, which never waits for
// the console (see say): the panel is drawn by whoever holds the console
// next, or the console's writer. It notes the foreground first
// (refreshForeground), which asks the terminal and never waits.
func (c *console) queuePanel(lines []string) {
	fg := c.tty != nil && c.foregroundNow()
	c.q.mu.Lock()
	c.q.panel, c.q.fg = lines, fg
	c.q.mu.Unlock()
	c.wakeWriter()
}

// showPanel is setPanel with c.mu held.
func (c *console) showPanel(lines []string) {
	c.watchResize()
	c.erasePanel()
	c.panel, c.held = lines, false
	c.drawPanel()
	c.out.Flush()
}

// drawAtOnce lets the panel be drawn before any line scrolls (watch: the
// run's lines come with its state, if any).
func (c *console) drawAtOnce() {
	c.lock()
	c.waitLine = false
	c.unlock()
}

// dropPanel erases the panel for good (before the run's last line).
func (c *console) dropPanel() {
	if c.gaveUp.Load() {
		return
	}
	c.lock()
	defer c.unlock()
	c.erasePanel()
	c.panel = nil
	c.out.Flush()
	if c.winch != nil {
		signal.Stop(c.winch)
	}
}

// clearStatus erases the panel and keeps it off the screen until the next
// setPanel (the tool is about to suspend); c.mu must be held.
func (c *console) clearStatus() {
	c.erasePanel()
	c.held = true
}

// inBackground reports whether the tool is, right now, in the background
// of its terminal, where the shell owns the screen; c.mu must be held. The
// foreground noted with a queued panel may be older than a Ctrl+Z: under a
// wrapper that leads the job, the shell has the terminal back before the
// tool suspends, and the tool's goroutines run until it does. A terminal
// that is not the tool's controlling one (no foreground to ask) has no
// background.
func (c *console) inBackground() bool {
	if c.tty == nil {
		return false
	}
	pg, err := foregroundGroup(c.tty)
	return err == nil && pg != syscall.Getpgrp()
}

// erasePanel removes the panel from the screen; c.mu must be held. The
// cursor is on the line below the panel: it goes up as many rows as the
// panel's lines take now (a narrower terminal has re-wrapped them), and
// erases those rows one by one, coming back to the first. Not "erase to
// the end of the screen": when the re-wrap pushed the panel's top into
// the scrollback, the cursor stops at the screen's top left, and erasing
// the whole screen from there makes tmux (scroll-on-clear) copy it into
// the scrollback first — a stale panel at every redraw.
func (c *console) erasePanel() {
	if len(c.drawn) == 0 || c.inBackground() {
		// From the background the panel stays on the screen, forgotten:
		// moving up would erase the shell's own lines.
		c.drawn = nil
		return
	}
	rows := 0
	w := c.termWidth()
	for _, l := range c.drawn {
		rows += rowsTaken(l, w)
	}
	fmt.Fprintf(c.out, "\r\x1b[%dA\x1b[2K", rows)
	for range rows - 1 {
		c.out.WriteString("\x1b[B\x1b[2K")
	}
	if rows > 1 {
		fmt.Fprintf(c.out, "\x1b[%dA", rows-1)
	}
	c.drawn = nil
}

// drawPanel draws the panel below the cursor; c.mu must be held.
func (c *console) drawPanel() {
	if len(c.panel) == 0 || c.drawn != nil || c.held || !c.foreground || c.waitLine || c.inBackground() {
		return
	}
	w := c.termWidth() - 1
	drawn := make([]string, 0, len(c.panel))
	for _, l := range c.panel {
		// Drawn at an older width, a line may be too long now.
		if displayWidth(stripSGR(l)) > w {
			l = clipWidth(stripSGR(l), w)
		}
		c.out.WriteString(l)
		c.out.WriteString("\x1b[K\n")
		drawn = append(drawn, l)
	}
	c.drawn = drawn
}

// scroll writes a line that scrolls, above the panel; c.mu must be held.
func (c *console) scroll(w io.Writer, line string) {
	c.erasePanel()
	if w != c.out {
		c.out.Flush() // stdout first, so that the two streams stay in order
	}
	line = sanitizeString(line)
	io.WriteString(w, line+"\n")
	if c.onLine != nil {
		c.onLine(line)
	}
	c.waitLine = false
	c.drawPanel()
	c.out.Flush()
}

// progressf prints a line at the progress and verbose levels.
func (c *console) progressf(format string, args ...any) {
	if c.level == outputQuiet {
		return
	}
	c.say(false, fmt.Sprintf(format, args...))
}

// noticef prints a diagnostic at every level but quiet.
func (c *console) noticef(format string, args ...any) {
	if c.level == outputQuiet {
		return
	}
	c.errorf(format, args...)
}

// errorf prints a diagnostic at every level.
func (c *console) errorf(format string, args ...any) {
	c.say(true, progName+": "+fmt.Sprintf(format, args...))
}

// rawf prints to stderr without the program name: the interrupt messages
// ("Interrupted: waiting for claude …"), which read as the tool speaking to
// the user at the terminal rather than as diagnostics.
func (c *console) rawf(format string, args ...any) {
	c.say(true, fmt.Sprintf(format, args...))
}

// say writes a line that scrolls, to stderr with toErr, or stdout. It
// never waits for the console: a write to a terminal that does not drain
// (Ctrl+S, a slow link under an agent's flood) can hold it up, and the
// supervisor, which says most lines, must go on answering signals and
// timeouts. The line is queued: whoever takes the console next writes the
// queued lines first, in order (lock), and the console's own writer
// goroutine takes it for them; settle waits until they are written.
func (c *console) say(toErr bool, line string) {
	c.q.mu.Lock()
	c.q.lines = append(c.q.lines, queuedLine{toErr: toErr, line: line})
	c.q.mu.Unlock()
	c.wakeWriter()
}

// sayQueue is what was said to a console and not yet written: the lines
// (say), and the panel asked for (queuePanel, with the foreground as it
// was then). wake wakes the console's writer goroutine, which writes them.
type sayQueue struct {
	mu    sync.Mutex
	lines []queuedLine
	panel []string
	fg    bool
	// release asks for what was held in the background to be written
	// (releaseHeld).
	release bool
	wake    chan struct{}
	once    sync.Once
}

// queuedLine is a line said (say), not yet written.
type queuedLine struct {
	toErr bool
	line  string
}

// wakeWriter has the console's writer goroutine (started the first time)
// write what is queued.
func (c *console) wakeWriter() {
	c.q.once.Do(func() {
		c.q.wake = make(chan struct{}, 1)
		go func() {
			for range c.q.wake {
				c.q.mu.Lock()
				release := c.q.release
				c.q.release = false
				c.q.mu.Unlock()
				if release {
					c.release(false) // writes the queue too
				} else {
					c.lock() // writes the queue
					c.unlock()
				}
			}
		}()
	})
	select {
	case c.q.wake <- struct{}{}:
	default: // a wake is pending
	}
}

// lock takes the console and writes what is queued (say, queuePanel), so
// that it comes before what the holder writes.
func (c *console) lock() {
	c.mu.Lock()
	c.writeQueued()
}

// unlock writes what was queued meanwhile and lets go of the console; what
// is queued after that, the writer goroutine writes.
func (c *console) unlock() {
	c.writeQueued()
	c.mu.Unlock()
}

// writeQueued writes the queued lines, then the queued panel; c.mu is held.
func (c *console) writeQueued() {
	c.q.mu.Lock()
	q, panel, fg := c.q.lines, c.q.panel, c.q.fg
	c.q.lines, c.q.panel = nil, nil
	c.q.mu.Unlock()
	for _, l := range q {
		var w io.Writer = c.out
		if l.toErr {
			w = c.errWriter()
		}
		c.scroll(w, l.line)
	}
	if panel != nil {
		if c.tty != nil {
			c.foreground = fg
		}
		c.showPanel(panel)
	}
}

// tellLines has every line that scrolls from now on told to f (onLine);
// the lines said so far are written first, untold.
func (c *console) tellLines(f func(line string)) {
	c.lock()
	c.onLine = f
	c.unlock()
}

// settle writes everything queued, waiting for the console if need be:
// before the process exits, so that no line is left behind.
func (c *console) settle() {
	if c == nil || c.gaveUp.Load() {
		return
	}
	c.lock()
	c.unlock()
}

// settleOr is settle at a run's exit, which must not hang on an output that
// does not drain (a paused pager, a stopped terminal): an ending signal from
// abort ends the wait, and with bounded (a signal ended the run) so does
// exitWait (awaitAtExit). It then gives up the lines left, as later settles do,
// and reports false.
func (c *console) settleOr(abort <-chan os.Signal, bounded bool) bool {
	if c == nil {
		return true
	}
	done := make(chan struct{})
	go func() {
		c.settle()
		close(done)
	}()
	if awaitAtExit(done, abort, bounded) {
		return true
	}
	c.gaveUp.Store(true)
	return false
}

// exitWait bounds awaitAtExit for a run a signal ended.
const exitWait = time.Second

// awaitAtExit waits for done at a run's exit, for output that a reader must
// take, at most exitWait once bounded (a signal ended the run: the reader
// may be what stopped it) or an ending signal came from abort, which ends
// a bounded wait at once. It reports whether done came.
func awaitAtExit(done <-chan struct{}, abort <-chan os.Signal, bounded bool) bool {
	var limit <-chan time.Time
	if bounded {
		t := time.NewTimer(exitWait)
		defer t.Stop()
		limit = t.C
	}
	for {
		select {
		case <-done:
			return true
		case <-limit:
			return false
		case sig := <-abort:
			if ending := sig != syscall.SIGTSTP && sig != syscall.SIGCONT; ending && limit != nil { // SIGTSTP: too late to suspend
				return false
			} else if ending {
				limit = time.After(exitWait) // an output that drains is not given up
			}
		}
	}
}

// transcript returns the writer for the agent's formatted output: the log,
// and the screen in verbose mode.
func (c *console) transcript(log *runLog) io.Writer {
	if c.level != outputVerbose {
		return log
	}
	return &teeWriter{c: c, log: log}
}

// teeWriter writes the transcript to the log as it is and to the screen
// sanitized.
type teeWriter struct {
	c   *console
	log *runLog
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.log.Write(p)
	t.c.lock()
	t.c.erasePanel()
	t.c.out.Write(sanitize(p))
	t.c.unlock()
	return len(p), nil
}

// Flush shows what the transcript holds so far, and the panel below it.
func (t *teeWriter) Flush() {
	t.c.lock()
	t.c.drawPanel()
	t.c.out.Flush()
	t.c.unlock()
}
