package main

// This file renders the live panel: given what a run is doing (runState),
// the time and the terminal's width, the lines to draw. It is pure: the
// console draws the lines, the run and watch decide when. The rules are:
// every line fits in width-1 columns (a line that reaches the last column
// makes some terminals wrap, and a wrapped line leaves a fragment behind
// when the panel is redrawn); a narrow terminal gets fewer fields, lowest
// priority first, then clipped text, never a wrapped line; colour only when
// asked; every text that came from the agent is already sanitized.
//
// The full panel (the progress level):
//
//	● running iteration 3  [██████░░░░░░░░░░░░░░░░░░░░░░░░]  2/50 (4%)
//	Elapsed 5m42s · ETA ~18m30s · Avg 28s · Mode loop · Tasks 35/60 · Cost $0.42 · updated 2s ago
//	Now: Bash: go test ./... · 42s
//	Stop requested (press s to cancel) · from the s key
//	Press s to toggle stop
//
// The one-line panel (the verbose level, under the scrolling transcript):
//
//	● running iteration 3 · 2/50 · Stop requested (press s to cancel) · Bash: go test ./... · 42s · 5m42s · $0.42

import (
	"fmt"
	"strings"
	"time"
)

// panelOpts are how a panel is drawn.
type panelOpts struct {
	width   int  // the terminal's columns
	color   bool // SGR colours
	oneLine bool // the verbose level's one-line panel
	// watch draws it for 'claude-iterate watch': the s key is not this
	// terminal's; cancel is the command that withdraws a stop request
	// there ("": claude-iterate stop --cancel).
	watch  bool
	cancel string
}

// SGR styles of the panel.
const (
	styleNone   = ""
	styleBold   = "1"
	styleDim    = "2"
	styleGreen  = "32"
	styleYellow = "1;33"
	styleRed    = "1;31"
	styleCyan   = "36"
)

// segment is a piece of a line in one style.
type segment struct {
	text  string
	style string
}

// Fitting a line: items of priority prioKeep are never dropped; a
// flexible item is not clipped below minFlexWidth columns.
const (
	prioKeep     = 9
	minFlexWidth = 12
)

// panelItem is one field of a line that may be dropped or clipped to fit.
type panelItem struct {
	segs []segment
	// prio: the lower, the sooner dropped on a narrow terminal.
	prio int
	// flex items are clipped rather than dropped.
	flex bool
}

// renderPanel returns the panel's lines for st at now.
func renderPanel(st *runState, now time.Time, o panelOpts) []string {
	w := max(o.width-1, 1)
	if o.oneLine {
		return []string{renderItems(oneLineItems(st, now, o), " · ", w, o.color)}
	}
	var lines []string
	lines = append(lines, renderItems(headerItems(st, w), " ", w, o.color))
	lines = append(lines, renderItems(fieldItems(st, now), " · ", w, o.color))
	lines = append(lines, renderItems([]panelItem{{segs: []segment{{"Now: ", styleDim}, {nowText(st, now, o.watch), styleCyan}}, flex: true}}, "", w, o.color))
	lines = append(lines, questionPanelLines(st, w, o.color)...)
	if st.StopSource != "" {
		lines = append(lines, renderItems([]panelItem{
			{segs: []segment{{stopIndicator(st, o), styleYellow}}, prio: 2, flex: true},
			{segs: []segment{{"from " + stopSourceText(st.StopSource), styleNone}}, prio: 1},
		}, " · ", w, o.color))
	}
	switch {
	case o.watch:
		lines = append(lines, renderItems([]panelItem{{segs: []segment{{fmt.Sprintf("Watching the run of %s (pid %d); Ctrl+C stops watching, not the run", sanitizeString(st.Workspace), st.PID), styleDim}}, flex: true}}, "", w, o.color))
	case st.Keyboard:
		lines = append(lines, renderItems([]panelItem{{segs: []segment{{"Press s to toggle stop", styleDim}}, flex: true}}, "", w, o.color))
	}
	return lines
}

// stateLabel says what the run is doing, and its style.
func stateLabel(st *runState) (string, string) {
	switch {
	case st.Ended:
		return "ended", styleBold
	case !st.Suspended.IsZero():
		return "suspended", styleYellow
	case st.Interrupted != "":
		return "interrupted (" + st.Interrupted + ")", styleRed
	case st.Phase == phaseLimit:
		return "waiting for the usage-limit reset", styleYellow
	case st.Phase == phaseQuestion:
		return "waiting for an answer", styleYellow
	case st.Phase == phaseVerify:
		return "verifying", styleGreen
	case st.StopSource != "" && st.Phase == phaseRunning:
		return fmt.Sprintf("stopping after iteration %d", st.Iteration), styleYellow
	case st.StopSource != "":
		return "stopping", styleYellow
	case st.Phase == phaseRunning && st.Agent != "" && st.Agent != agentClaude: // the default is not named
		return fmt.Sprintf("running iteration %d (%s)", st.Iteration, st.Agent), styleGreen
	case st.Phase == phaseRunning:
		return fmt.Sprintf("running iteration %d", st.Iteration), styleGreen
	case st.Phase == phaseStarting:
		return "starting", styleGreen
	}
	return "running", styleGreen
}

func headerItems(st *runState, w int) []panelItem {
	label, style := stateLabel(st)
	state := panelItem{segs: []segment{{"● " + label, style}}, prio: 9, flex: true}
	count := fmt.Sprintf("%d/%d", st.Totals.Iterations, st.Max)
	pct := ""
	if st.Max > 0 {
		pct = fmt.Sprintf(" (%d%%)", st.Totals.Iterations*100/st.Max)
	}
	// The bar takes what the rest leaves, within limits.
	rest := displayWidth("● "+label) + displayWidth(count+pct) + 6
	barWidth := min(40, w-rest)
	items := []panelItem{state}
	if barWidth >= 10 {
		filled := 0
		if st.Max > 0 {
			filled = min(barWidth, barWidth*st.Totals.Iterations/st.Max)
		}
		items = append(items, panelItem{segs: []segment{
			{" [", styleNone}, {strings.Repeat("█", filled), styleGreen},
			{strings.Repeat("░", barWidth-filled), styleDim}, {"] ", styleNone},
		}, prio: 3})
	}
	items = append(items, panelItem{segs: []segment{{count, styleBold}}, prio: 8})
	if pct != "" {
		items = append(items, panelItem{segs: []segment{{strings.TrimPrefix(pct, " "), styleNone}}, prio: 2})
	}
	return items
}

// fieldItems are the second line's fields.
func fieldItems(st *runState, now time.Time) []panelItem {
	field := func(label, value string, prio int) panelItem {
		return panelItem{segs: []segment{{label + " ", styleDim}, {value, styleNone}}, prio: prio}
	}
	items := []panelItem{field("Elapsed", compactDuration(st.elapsed(now)), 9)}
	if eta, ok := panelETA(st, now); ok {
		items = append(items, field("ETA", "~"+compactDuration(eta), 6))
	}
	if st.Totals.Iterations > 0 {
		items = append(items, field("Avg", workDuration(time.Duration(st.Totals.DurationMS)*time.Millisecond/time.Duration(st.Totals.Iterations)), 4))
	}
	items = append(items, field("Mode", st.Mode, 1))
	if t := st.tasksText(); t != "" {
		items = append(items, field("Tasks", t, 8))
	}
	items = append(items, field("Cost", costText(st.Totals.CostUSD, st.Totals.estimated()), 7))
	if !st.Updated.IsZero() {
		items = append(items, panelItem{segs: []segment{{"updated " + compactDuration(now.Sub(st.Updated)) + " ago", styleDim}}, prio: 3})
	}
	return items
}

func oneLineItems(st *runState, now time.Time, o panelOpts) []panelItem {
	label, style := stateLabel(st)
	items := []panelItem{
		{segs: []segment{{"● " + label, style}}, prio: 9},
		{segs: []segment{{fmt.Sprintf("%d/%d", st.Totals.Iterations, st.Max), styleBold}}, prio: 5},
	}
	if st.StopSource != "" {
		items = append(items, panelItem{segs: []segment{{stopIndicator(st, o), styleYellow}}, prio: 8, flex: true})
	}
	items = append(items,
		panelItem{segs: []segment{{nowText(st, now, o.watch), styleCyan}}, prio: 7, flex: true},
		panelItem{segs: []segment{{"elapsed " + compactDuration(st.elapsed(now)), styleNone}}, prio: 4},
		panelItem{segs: []segment{{costText(st.Totals.CostUSD, st.Totals.estimated()), styleNone}}, prio: 3},
	)
	if t := st.tasksText(); t != "" {
		items = append(items, panelItem{segs: []segment{{"tasks " + t, styleNone}}, prio: 2})
	}
	return items
}

// stopIndicator is the stop request's line.
func stopIndicator(st *runState, o panelOpts) string {
	switch {
	case o.watch && o.cancel != "":
		return "Stop requested (" + o.cancel + " to cancel)"
	case o.watch:
		return "Stop requested (claude-iterate stop --cancel to cancel)"
	case st.Keyboard:
		return "Stop requested (press s to cancel)"
	}
	return "Stop requested (delete .stop to cancel)"
}

func stopSourceText(source string) string {
	switch source {
	case stopByKeyboard:
		return "the s key"
	case stopByFile:
		return stopFile
	}
	return source
}

// panelETA estimates the time left at now, once an iteration is done. An
// iteration's cycle is its own duration plus the gap before the next one
// (the delay, the stop conditions): measured from start to start once two
// iterations have started, else the average iteration plus the delay in
// progress. In loop mode (one item per iteration) the items left bound the
// iterations left. The last iteration has no delay after it.
func panelETA(st *runState, now time.Time) (time.Duration, bool) {
	done := st.Totals.Iterations
	if done == 0 || st.Max == 0 || st.Ended || st.Phase == phaseQuestion {
		return 0, false // waiting for a person has no estimate
	}
	avg := time.Duration(st.Totals.DurationMS) * time.Millisecond / time.Duration(done)
	left := st.Max - done
	if st.Mode == modeLoop && st.Tasks != nil && st.Tasks.Total > 0 {
		left = min(left, st.Tasks.Total-st.Tasks.Completed)
	}
	if left <= 0 {
		return 0, false
	}
	running := st.Phase == phaseRunning
	// after: the iterations still to start once the current cycle ends.
	after := left
	if running {
		after--
	}
	if cycles := st.Iteration - 1; cycles > 0 && !st.IterStarted.IsZero() {
		suspended := time.Duration(st.SuspendedMS) * time.Millisecond
		cycle := max(st.IterStarted.Sub(st.Started)-suspended, 0) / time.Duration(cycles)
		cycle = max(cycle, avg)
		gap := cycle - avg
		// The current cycle ends cycle after it started, less its gap
		// if no iteration follows.
		d := st.IterStarted.Add(cycle).Sub(now) + time.Duration(after)*cycle - gap
		if running {
			// The current iteration overran its cycle: what follows it.
			d = max(d, time.Duration(after)*cycle-gap)
		}
		return max(d, 0), true
	}
	d := avg * time.Duration(left)
	switch {
	case running:
		d -= min(now.Sub(st.IterStarted), avg)
	case st.Phase == phaseDelay:
		d += max(st.WaitUntil.Sub(now), 0)
	}
	return max(d, 0), true
}

// nowText is what the run is doing now, in words.
func nowText(st *runState, now time.Time, watch bool) string {
	left := func() string { return compactDuration(ceilSecond(max(0, st.WaitUntil.Sub(now)))) }
	switch {
	case st.Ended:
		return "ended"
	case !st.Suspended.IsZero():
		return "since " + st.Suspended.Local().Format("15:04:05") + " (Ctrl+Z): fg in its terminal goes on"
	case st.Interrupted != "" && st.Phase == phaseRunning:
		return "waiting for claude to exit"
	case st.Phase == phaseLimit:
		s := "Usage limit: retrying in " + left()
		if st.WaitEndsRun {
			s = "Usage limit: the run ends in " + left() + " (--max-duration)"
		}
		if st.Keyboard && !watch {
			s += " (s or Ctrl+C to stop)"
		}
		return s
	case st.Phase == phaseDelay && st.WaitEndsRun:
		return "the run ends in " + left() + " (--max-duration)"
	case st.Phase == phaseDelay && st.PauseAfter > 0:
		return "next iteration in " + left() + " (a pause after " + plural(st.PauseAfter, "failure") + " in a row)"
	case st.Phase == phaseDelay:
		return "next iteration in " + left()
	case st.Phase == phaseQuestion:
		return "waiting for the answer to the agent's question"
	case st.Phase == phaseVerify:
		return "verifying (" + st.VerifyDepth + ")"
	case st.Phase == phaseStarting:
		return "starting"
	case st.Phase == phaseBetween && st.Activity.Kind == "":
		return "checking the stop conditions"
	}
	return st.Activity.text(now)
}

// renderItems joins items with sep, dropping the lowest-priority ones and
// clipping flexible ones until the line fits in w columns.
func renderItems(items []panelItem, sep string, w int, color bool) string {
	width := func(it panelItem) int {
		n := 0
		for _, s := range it.segs {
			n += displayWidth(s.text)
		}
		return n
	}
	total := func() int {
		n := 0
		for i, it := range items {
			if i > 0 {
				n += displayWidth(sep)
			}
			n += width(it)
		}
		return n
	}
	for total() > w {
		// Drop the lowest-priority fixed item, if any is left.
		low := -1
		for i, it := range items {
			if !it.flex && it.prio < prioKeep && (low < 0 || it.prio < items[low].prio) {
				low = i
			}
		}
		if low < 0 {
			break
		}
		items = append(items[:low:low], items[low+1:]...)
	}
	// Clip the flexible items, last first; one that would keep too little
	// goes (unless it is the only one).
	for i := len(items) - 1; i >= 0 && total() > w; i-- {
		if !items[i].flex {
			continue
		}
		over := total() - w
		if width(items[i])-over < minFlexWidth && len(items) > 1 {
			items = append(items[:i:i], items[i+1:]...)
			continue
		}
		segs := items[i].segs
		for j := len(segs) - 1; j >= 0 && over > 0; j-- {
			sw := displayWidth(segs[j].text)
			segs[j].text = clipWidth(segs[j].text, max(0, sw-over))
			over -= sw - displayWidth(segs[j].text)
		}
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString(sep)
		}
		for _, s := range it.segs {
			if color && s.style != styleNone && s.text != "" {
				b.WriteString("\x1b[" + s.style + "m" + s.text + "\x1b[0m")
			} else {
				b.WriteString(s.text)
			}
		}
	}
	line := b.String()
	if displayWidth(stripSGR(line)) > w {
		line = clipWidth(stripSGR(line), w) // the items alone cannot fit
	}
	return line
}

// rowsTaken is how many terminal rows a line of text takes at width
// columns once the terminal has wrapped (or, after a resize, re-wrapped)
// it.
func rowsTaken(line string, width int) int {
	w := displayWidth(stripSGR(line))
	if width <= 0 || w <= width {
		return 1
	}
	return (w + width - 1) / width
}
