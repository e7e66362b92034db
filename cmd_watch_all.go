package main

// This file implements 'claude-iterate watch --all': ps's table, live and
// full screen, with keys to act on the selected run. The rules are: it
// only reads the registry and the runs' own files, and acts only as the
// stop and answer commands do (runView's requestStop, cancelStop, answer):
// leaving it never touches a run; it reads what changed once a second
// (runsReader) and follows an opened run's state file as watch does
// (watchPoll), and redraws only a frame that differs from the one on the
// screen; every line fits the terminal's width (40 to 200 columns and
// more), colour only without NO_COLOR; without a terminal on both sides,
// or with TERM=dumb, it prints ps's table once and exits. The terminal is
// the keyboard's cbreak mode (Ctrl+C and Ctrl+Z keep their signals) on the
// alternate screen, and both are put back on every way out.

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// watchAllPoll is how often watch --all reads the registry and redraws
// its table, whose elapsed times count seconds.
const watchAllPoll = time.Second

// escWait is how long an Esc waits for the rest of an arrow key's bytes.
const escWait = 50 * time.Millisecond

// What watch --all shows.
const (
	viewTable  = iota // the runs
	viewPanel         // one run's panel, as watch <ws> shows it
	viewAnswer        // the table, and a one-line editor for an answer
)

// allWatcher is watch --all's screen.
type allWatcher struct {
	out    *os.File
	kb     *keyboard
	color  bool
	reader *runsReader
	runs   []runView
	err    error // reading the registry
	// selID is the selected run's id; view what is shown; edit the answer
	// being typed, to the run answerID; msg the last action's outcome,
	// about the run msgRun ("" none), shown until msgUntil (zero: for as
	// long as that run is going on and selected).
	selID, answerID string
	view            int
	edit            []byte
	msg, msgRun     string
	msgUntil        time.Time
	// panel is the opened run's state file (panelPath, of the run
	// panelPID) as last read.
	panel      *runState
	panelStamp fileStamp
	panelPath  string
	panelPID   int
	frame      string // what is on the screen
}

// runWatchAll is watch --all.
func runWatchAll(env *cliEnv) (err error) {
	out, _ := env.stdout.(*os.File)
	in, _ := env.stdin.(*os.File)
	var kb *keyboard
	if out != nil && in != nil && isTerminal(out) && isTerminal(in) && os.Getenv("TERM") != "dumb" {
		kb = openKeyboard(in)
	}
	if kb == nil {
		runs, err := liveRuns("")
		if err != nil {
			return err
		}
		return writeError(writePS(env.stdout, runs, false))
	}
	// A panic here ends the watch in one line, after the terminal is put
	// back (the deferred calls below run first).
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	defer kb.close()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGTSTP, syscall.SIGCONT, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	a := &allWatcher{out: out, kb: kb, reader: newRunsReader(),
		color: colorTerm(os.Getenv("TERM"), os.Getenv("COLORTERM")) && os.Getenv("NO_COLOR") == ""}
	a.enterScreen()
	defer a.leaveScreen()
	a.refresh()
	a.draw()
	tick := time.NewTicker(watchAllPoll)
	defer tick.Stop()
	for {
		select {
		case k := <-kb.keys:
			view := a.view
			if a.key(k) {
				return nil
			}
			if a.view != view {
				tick.Reset(a.poll())
			}
		case sig := <-sigs:
			switch sig {
			case syscall.SIGWINCH:
				a.frame = "" // the terminal re-wrapped what it had
			case syscall.SIGTSTP:
				kb.pause()
				a.leaveScreen()
				raiseHere(syscall.SIGSTOP)
				fallthrough
			case syscall.SIGCONT:
				kb.resume()
				a.enterScreen()
			default:
				return &exitCodeError{code: exitCodeFor(sig)}
			}
		case p := <-kb.panics():
			return fmt.Errorf("internal error: %v", p)
		case <-tick.C:
			a.refresh()
		}
		a.draw()
	}
}

// msgLife is how long a plain confirmation ("Answer saved ...") stays.
const msgLife = 5 * time.Second

// say shows msg, an action's outcome about the run id ("" none): for life
// (0: until the run ends or another is selected; always gone by then).
func (a *allWatcher) say(id, msg string, life time.Duration) {
	a.msg, a.msgRun, a.msgUntil = msg, id, time.Time{}
	if life > 0 {
		a.msgUntil = time.Now().Add(life)
	}
}

// expireMsg drops the message at now once it is no longer true: its run
// ended or is no longer the selected one (a key would then act on
// another run than the message's), or its time is over.
func (a *allWatcher) expireMsg(now time.Time) {
	if a.msg == "" {
		return
	}
	_, live := a.selected()
	gone := a.msgRun != "" && (a.selID != a.msgRun || !live)
	if gone || (!a.msgUntil.IsZero() && !now.Before(a.msgUntil)) {
		a.msg, a.msgRun, a.msgUntil = "", "", time.Time{}
	}
}

// poll is how often the current view is read again.
func (a *allWatcher) poll() time.Duration {
	if a.view == viewPanel {
		return watchPoll
	}
	return watchAllPoll
}

// enterScreen switches to the alternate screen, without a cursor.
func (a *allWatcher) enterScreen() {
	a.frame = ""
	a.out.WriteString("\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J")
}

// leaveScreen puts the shell's screen and the cursor back.
func (a *allWatcher) leaveScreen() {
	a.out.WriteString("\x1b[?25h\x1b[?1049l")
}

// refresh reads the runs again, and the opened run's state file.
func (a *allWatcher) refresh() {
	a.runs, a.err = a.reader.runs("")
	// The opened run's state file is read even once the run has left the
	// registry: its last write says how the run ended.
	if a.view == viewPanel {
		if s := stampOf(a.panelPath); s != a.panelStamp {
			if st, err := readRunState(a.panelPath); err == nil && st.PID == a.panelPID {
				a.panel, a.panelStamp = st, s
			}
		}
	}
	if _, ok := a.selected(); !ok && len(a.runs) > 0 && a.view != viewPanel {
		a.selID = a.runs[0].ID
	}
}

// selected is the selected run, if it is still going on.
func (a *allWatcher) selected() (runView, bool) {
	for _, v := range a.runs {
		if v.ID == a.selID {
			return v, true
		}
	}
	return runView{}, false
}

// move selects the run d rows down (up when negative).
func (a *allWatcher) move(d int) {
	i := 0
	for j, v := range a.runs {
		if v.ID == a.selID {
			i = j
		}
	}
	if len(a.runs) > 0 {
		a.selID = a.runs[min(max(i+d, 0), len(a.runs)-1)].ID
	}
}

// key takes one key; it reports whether watch --all ends (q).
func (a *allWatcher) key(k byte) (quit bool) {
	name := string(k)
	if k == 0x1b {
		name = a.escape()
	}
	if a.view == viewAnswer {
		a.editKey(k, name)
		return false
	}
	switch name {
	case "q", "Q":
		return true
	case "up", "k":
		if a.view == viewTable {
			a.move(-1)
		}
	case "down", "j":
		if a.view == viewTable {
			a.move(1)
		}
	case "\n", "\r":
		if v, ok := a.selected(); ok && a.view == viewTable {
			a.view, a.panel, a.panelStamp = viewPanel, nil, fileStamp{}
			a.say("", "", 0)
			a.panelPath, a.panelPID = v.entry.State, v.PID
			a.refresh()
		}
	case "esc":
		if a.view == viewPanel {
			a.view = viewTable
			a.say("", "", 0)
			a.refresh()
		}
	case "s", "S":
		a.toggleStop()
	case "a", "A":
		a.startAnswer()
	}
	return false
}

// escape reads what follows an Esc: an arrow key's bytes ("up", "down";
// "" for another sequence), or nothing ("esc").
func (a *allWatcher) escape() string {
	next := func() (byte, bool) {
		select {
		case b := <-a.kb.keys:
			return b, true
		case <-time.After(escWait):
			return 0, false
		}
	}
	b, ok := next()
	if !ok {
		return "esc"
	}
	if b != '[' && b != 'O' {
		return ""
	}
	c, _ := next()
	switch c {
	case 'A':
		return "up"
	case 'B':
		return "down"
	}
	return ""
}

// toggleStop asks the selected run to stop after its iteration, or
// withdraws that request.
func (a *allWatcher) toggleStop() {
	v, ok := a.selected()
	if !ok {
		return
	}
	switch {
	case stopFileExists(filepath.Join(v.entry.StateDir, stopFile)):
		if _, err := v.cancelStop(); err != nil {
			a.say(v.ID, "Cannot cancel the stop: "+err.Error(), 0)
		} else {
			a.say(v.ID, "Stop request cancelled for "+v.label(), msgLife)
		}
	case v.StopRequested:
		a.say(v.ID, "The stop was asked with the s key in the run's terminal: cancel it there", 0)
	default:
		if err := v.requestStop(); err != nil {
			a.say(v.ID, "Cannot ask the run to stop: "+err.Error(), 0)
		} else {
			a.say(v.ID, "Stop requested for "+v.label()+": "+stopsWhen(v.State)+" (s again cancels)", 0)
		}
	}
	a.refresh()
}

// stopsWhen says when a run in state stops once asked: a wait (for an
// answer, between iterations, for a usage limit's reset) ends at once.
func stopsWhen(state string) string {
	switch state {
	case runStateWaiting:
		return "it stops now, without the answer"
	case runStateDelay, runStateLimit:
		return "its wait ends and it stops now"
	}
	return "it stops after its iteration"
}

// startAnswer opens the editor for an answer to the selected run's
// question.
func (a *allWatcher) startAnswer() {
	v, ok := a.selected()
	switch {
	case !ok:
	case v.Question == nil:
		a.say(v.ID, "No question is pending in "+v.label(), msgLife)
	default:
		a.view, a.answerID, a.edit = viewAnswer, v.ID, nil
		a.say("", "", 0)
	}
}

// editKey takes a key of the answer's editor (name: the key, or what an
// Esc began).
func (a *allWatcher) editKey(k byte, name string) {
	switch {
	case name == "esc":
		a.view = viewTable
		a.say(a.answerID, "Answer cancelled", msgLife)
	case k == '\n' || k == '\r':
		a.view = viewTable
		v, ok := a.selected()
		if !ok || v.ID != a.answerID {
			a.say("", "The run ended: the answer is not saved", msgLife)
			return
		}
		if err := v.answer(string(a.edit)); err != nil {
			a.say(v.ID, "Answer not saved: "+err.Error(), 0)
		} else {
			a.say(v.ID, "Answer saved for "+v.label()+": the run goes on with it", msgLife)
		}
		a.refresh()
	case k == 0x7f || k == 0x08:
		if len(a.edit) > 0 {
			_, n := utf8.DecodeLastRune(a.edit)
			a.edit = a.edit[:len(a.edit)-n]
		}
	case k == 0x15: // Ctrl+U
		a.edit = a.edit[:0]
	case k >= 0x20 && k != 0x7f && len(a.edit) < maxAnswer:
		a.edit = append(a.edit, k)
	}
}

// draw writes the frame if it changed.
func (a *allWatcher) draw() {
	cols, rows := terminalSize(a.out)
	now := time.Now()
	a.expireMsg(now)
	lines := a.render(now, cols, rows)
	frame := "\x1b[H" + strings.Join(lines, "\x1b[K\r\n") + "\x1b[K\x1b[J"
	if frame == a.frame {
		return
	}
	a.frame = frame
	a.out.WriteString(frame)
}

// watchAllMinCols and watchAllMinRows are the smallest terminal that
// holds a frame: the title, a run's row, the hint and the footer.
const watchAllMinCols, watchAllMinRows = 40, 8

// render is the frame's lines at now on a cols by rows terminal; below
// its minimum size, one line that says so.
func (a *allWatcher) render(now time.Time, cols, rows int) []string {
	w := max(cols-1, 10)
	if cols < watchAllMinCols || rows < watchAllMinRows {
		// Folded to the width, as many lines as the rows hold: the
		// message is cut only on a terminal too small for it whole.
		return foldWords(fmt.Sprintf("terminal too small: %d×%d at least", watchAllMinCols, watchAllMinRows), max(cols-1, 1), max(rows, 1))
	}
	style := func(s, sgr string) string {
		if a.color && sgr != "" && s != "" {
			return "\x1b[" + sgr + "m" + s + "\x1b[0m"
		}
		return s
	}
	var foot []string
	if a.msg != "" {
		foot = append(foot, clipWidth(sanitizeString(a.msg), w))
	}
	var body []string
	if a.view == viewPanel {
		body, foot = a.renderPanel(now, w, rows, style, foot)
	} else {
		if v, ok := a.selected(); ok && v.Question != nil {
			foot = append(a.questionLines(v, w, style), foot...)
		}
		if a.view == viewAnswer {
			foot = append(foot, clipWidth(style("Answer: ", styleBold)+lastColumns(sanitizeString(string(a.edit)), w-10)+"▏", w))
			foot = append(foot, helpLines("Enter sends · Esc cancels · Ctrl+U clears", w, style)...)
		} else {
			foot = append(foot, helpLines(a.keysHelp(), w, style)...)
		}
		body = a.renderTable(w, rows-len(foot)-3, style)
	}
	title := fmt.Sprintf("claude-iterate · %s going on", plural(len(a.runs), "run"))
	if a.err != nil {
		title = "claude-iterate: " + a.err.Error()
	}
	lines := append([]string{style(clipWidth(title, w), styleBold), ""}, body...)
	lines = append(append(lines, ""), foot...)
	if len(lines) > rows {
		lines = append(lines[:max(rows-len(foot), 1)], foot...)
	}
	return lines
}

// questionLines are v's pending question under the table, whole: wrapped
// to w columns (at most questionLines lines), sanitized.
func (a *allWatcher) questionLines(v runView, w int, style func(s, sgr string) string) []string {
	label := "Question from " + sanitizeString(v.label()) + ": "
	lw := displayWidth(label)
	if lw > w/2 { // a long name: the question starts on the next line
		label, lw = clipWidth(label, w), 0
	}
	text := wrapWidth(sanitizeString(questionLine(v)), w-lw, w-2, questionLines)
	lines := []string{style(label, styleYellow)}
	if lw == 0 {
		lines = append(lines, "")
	}
	lines[len(lines)-1] += text[0]
	for _, l := range text[1:] {
		lines = append(lines, "  "+l)
	}
	return lines
}

// keysHelp is the table's footer: only the keys that do something now
// (a run to select, to open, to stop; a question to answer).
func (a *allWatcher) keysHelp() string {
	var keys []string
	if len(a.runs) > 1 {
		keys = append(keys, "↑/↓ select")
	}
	if v, ok := a.selected(); ok {
		keys = append(keys, "Enter panel", "s stop (again: cancel)")
		if v.Question != nil {
			keys = append(keys, "a answer")
		}
	}
	return strings.Join(append(keys, "q quit"), " · ")
}

// panelKeys is the panel's footer: the run's keys only while it goes on
// (v, live: the run, if it does), a answer only with a question pending.
func panelKeys(v runView, live bool) string {
	keys := []string{"Esc back"}
	if live {
		keys = append(keys, "s stop (again: cancel)")
		if v.Question != nil {
			keys = append(keys, "a answer")
		}
	}
	return strings.Join(append(keys, "q quit"), " · ")
}

// helpLines are a footer's keys ("k does · k does"), dimmed, on as many
// lines of w columns as they need.
func helpLines(keys string, w int, style func(s, sgr string) string) []string {
	lines := wrapParts(keys, " · ", w)
	for i, l := range lines {
		lines[i] = style(clipWidth(l, w), styleDim)
	}
	return lines
}

// renderTable is the runs' table, the selected one marked, in at most
// height rows (the selected one kept in view); when not every run fits, its
// last line says how many more there are above and below.
func (a *allWatcher) renderTable(w, height int, style func(s, sgr string) string) []string {
	if len(a.runs) == 0 {
		return []string{"No run is going on."}
	}
	cells := make([][]string, len(a.runs))
	for i, v := range a.runs {
		cells[i] = psRow(v)
	}
	head, rowLines := fitTable(psHeader, cells, psPriorities, w-2)
	first, height := 0, max(height-1, 1)
	if len(a.runs) > height {
		height = max(height-1, 1) // a line for the runs out of view
	}
	for i, v := range a.runs {
		if v.ID == a.selID && i >= height {
			first = i - height + 1
		}
	}
	out := []string{style("  "+head, styleDim)}
	for i := first; i < len(a.runs) && i < first+height; i++ {
		v, line := a.runs[i], rowLines[i]
		switch {
		case v.ID == a.selID && a.color:
			out = append(out, "\x1b[7m> "+line+"\x1b[0m")
		case v.ID == a.selID:
			out = append(out, "> "+line)
		default:
			out = append(out, "  "+style(line, stateStyle(v.State)))
		}
	}
	if above, below := first, len(a.runs)-min(first+height, len(a.runs)); above+below > 0 {
		out = append(out, style(clipWidth("  "+moreText(above, below), w), styleDim))
	}
	return out
}

// moreText says how many runs are out of view: "↑ 2 more · ↓ 3 more".
func moreText(above, below int) string {
	var parts []string
	if above > 0 {
		parts = append(parts, fmt.Sprintf("↑ %d more", above))
	}
	if below > 0 {
		parts = append(parts, fmt.Sprintf("↓ %d more", below))
	}
	return strings.Join(parts, " · ")
}

// stateStyle is the colour of a run's row in its state.
func stateStyle(state string) string {
	switch state {
	case runStateWaiting, runStateStopping, runStateLimit:
		return styleYellow
	}
	return styleNone
}

// renderPanel is the opened run's panel, as watch <ws> draws it, under
// its last lines.
func (a *allWatcher) renderPanel(now time.Time, w, rows int, style func(s, sgr string) string, foot []string) (body, footOut []string) {
	v, live := a.selected()
	help := helpLines(panelKeys(v, live), w, style)
	st := a.panel
	switch {
	case st == nil && !live:
		return []string{"The run is no longer going on."}, append(foot, help...)
	case st == nil:
		return []string{"Waiting for the run to write its state…"}, append(foot, help...)
	case !live && !st.Ended:
		return []string{fmt.Sprintf("The run of %s (pid %d) ended without saying how: killed, or it crashed.", sanitizeString(st.Workspace), st.PID)}, append(foot, help...)
	}
	panel := renderPanel(st, now, panelOpts{width: w + 1, color: a.color, watch: true, cancel: "press s"})
	room := max(rows-len(panel)-len(foot)-5, 0)
	for _, l := range st.Lines[max(len(st.Lines)-room, 0):] {
		body = append(body, clipWidth(sanitizeString(l.Text), w))
	}
	if st.Ended {
		return append(body, "", clipWidth("The run ended: "+sanitizeString(st.Ending), w)), append(foot, help...)
	}
	return append(body, panel...), append(foot, help...)
}

// lastColumns is the end of s that fits in w columns.
func lastColumns(s string, w int) string {
	for displayWidth(s) > w && s != "" {
		_, n := utf8.DecodeRuneInString(s)
		s = s[n:]
	}
	return s
}
