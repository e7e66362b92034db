package main

// This file implements the history command: a workspace's iteration
// records (history.go), for people as a table per run under a chart of its
// durations, costs and progress, and for programs as JSON Lines. The rules
// are: runs are shown oldest first, each with its totals (the sums of its
// records, as everywhere); lines of the file that are not records are
// skipped and counted in one warning; the command reads, never writes; a
// run's totals are of all its records (a verification's time included),
// whatever --last shows.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// historyUsage is the manual of the history command.
const historyUsage = `Usage: claude-iterate history [<workspace>] [--json] [--run ID] [--last N]

Shows what each iteration of a workspace did, from its history (the record
each iteration leaves in history.jsonl, kept across runs until 'reset'):
when it started, how long it took (time suspended left out), whether it
succeeded (✓) or failed (✗, with the reason), its cost, the tasks' progress
after it, the tools it used, the tool calls claude refused, and how many
project files it changed (in a git work tree). Each run is shown with its
totals, under a chart of its iterations' durations and costs and of the
progress over them. On a terminal (or with $COLUMNS) the table fits its
width: the result, tools and refused calls are cut short with "…". With
--last N, a run's header still gives its totals, and says N are shown.
Without <workspace>, shows the ralph-mode run of the current directory.

Options:
  --json      print the records as JSON Lines, one per iteration, with the
              fields: run, iteration, startedAt, durationMs, end (done, failed,
              refused, hang, interrupted, limit), ok, reason, costUsd, turns,
              tokens, tools, refused, progress, complete, worked, tests,
              filesChanged
  --run ID    only the run ID (as shown, or a prefix of it), or the Nth run
              (1 is the first, -1 the last)
  --last N    only the last N iterations

Examples:
  claude-iterate history demo
  claude-iterate history demo --run -1 --last 5
  claude-iterate history demo --json | jq -s 'map(.costUsd) | add'
`

func runHistory(env *cliEnv, args []string) error {
	fs := newFlagSet("history")
	asJSON := fs.Bool("json", false, "")
	var runSel stringFlag
	var last countFlag
	fs.Var(&runSel, "run", "")
	fs.Var(&last, "last", "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if last.set && last.n == 0 {
		return usagef("invalid value \"0\" for flag --last: must be at least 1")
	}
	w, err := workspaceFromArgs(env, pos)
	if err != nil {
		return err
	}
	h, err := readHistory(w.historyPath())
	if err != nil {
		return err
	}
	if h.skipped > 0 {
		fmt.Fprintf(env.stderr, "%s: warning: %s of %s skipped: not iteration records (a run that crashed mid-write?)\n", progName, plural(h.skipped, "line"), relPath(env.projectRoot, w.historyPath()))
	}
	recs := h.records
	if runSel.set {
		id, err := selectRun(runs(recs), runSel.s)
		if err != nil {
			return err
		}
		recs = filterRun(recs, id)
	}
	all := recs // the runs' totals are of all their records
	if last.set && len(recs) > last.n {
		recs = recs[len(recs)-last.n:]
	}
	out := &errWriter{w: env.stdout}
	if *asJSON {
		for _, rec := range recs {
			data, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			out.Write(append(data, '\n'))
		}
		return writeError(out.err)
	}
	if len(h.records) == 0 {
		fmt.Fprintf(out, "No iterations recorded for %s yet.\n", w.Name)
		return writeError(out.err)
	}
	width := outputWidth(env.stdout)
	for i, id := range runs(recs) {
		if i > 0 {
			fmt.Fprintln(out)
		}
		showRun(out, filterRun(all, id), filterRun(recs, id), width)
	}
	return writeError(out.err)
}

// runs lists the run ids of recs, in order.
func runs(recs []*iterationRecord) []string {
	var ids []string
	seen := map[string]bool{}
	for _, rec := range recs {
		if !seen[rec.Run] {
			seen[rec.Run] = true
			ids = append(ids, rec.Run)
		}
	}
	return ids
}

func filterRun(recs []*iterationRecord, id string) []*iterationRecord {
	var out []*iterationRecord
	for _, rec := range recs {
		if rec.Run == id {
			out = append(out, rec)
		}
	}
	return out
}

// selectRun finds the run sel names: an id, a position (1 the first, -1
// the last), or a unique prefix of an id.
func selectRun(ids []string, sel string) (string, error) {
	for _, id := range ids {
		if id == sel {
			return id, nil
		}
	}
	if n, err := strconv.Atoi(sel); err == nil {
		switch {
		case n >= 1 && n <= len(ids):
			return ids[n-1], nil
		case n <= -1 && -n <= len(ids):
			return ids[len(ids)+n], nil
		}
	}
	var matches []string
	for _, id := range ids {
		if strings.HasPrefix(id, sel) {
			matches = append(matches, id)
		}
	}
	switch {
	case len(matches) == 1:
		return matches[0], nil
	case len(matches) > 1:
		return "", withHint(fmt.Errorf("run %q is ambiguous: %d runs start with it", sel, len(matches)), "give more of the id")
	}
	if n, err := strconv.Atoi(sel); err == nil {
		return "", withHint(fmt.Errorf("no run %d: the history holds %s", n, plural(len(ids), "run")), "use 1 to %d, or -1 for the last", len(ids))
	}
	return "", withHint(fmt.Errorf("no run %q in the history", sel), "claude-iterate history <workspace> shows the runs' ids")
}

// showRun prints one run: its totals (of all its records, run), its chart
// and its table (of the records shown), in width columns (0: any).
func showRun(w io.Writer, run, recs []*iterationRecord, width int) {
	var t workTotals
	var elapsed time.Duration // a verification's time is the run's too
	for _, rec := range run {
		t.add(rec)
		elapsed += rec.duration()
	}
	first := run[0].StartedAt.Local()
	failed := ""
	if t.FailedIterations > 0 {
		failed = fmt.Sprintf(" (%d failed)", t.FailedIterations)
	}
	shown := ""
	if len(recs) < len(run) {
		shown = fmt.Sprintf(" · the last %d shown", len(recs))
	}
	header := fmt.Sprintf("Run %s · %s · %s%s · %s · %s%s", run[0].Run, first.Format("2006-01-02 15:04"),
		plural(t.Iterations, "iteration"), failed, compactDuration(elapsed), formatCost(t.CostUSD), shown)
	for _, line := range wrapParts(header, " · ", width) {
		fmt.Fprintln(w, line)
	}
	bars := maxChartWidth
	if width > 0 {
		// "  progress  " before the bars, at most "  max 1m30s (the last
		// 60 iterations)" after them.
		bars = max(10, min(bars, width-12-34))
	}
	showChart(w, recs, bars)
	rows := [][]string{{"#", "START", "TIME", "RESULT", "COST", "PROGRESS", "TOOLS", "REFUSED", "FILES"}}
	for _, rec := range recs {
		start := rec.StartedAt.Local().Format("15:04:05")
		if !sameDay(rec.StartedAt, recs[0].StartedAt) {
			start = rec.StartedAt.Local().Format("01-02 15:04")
		}
		result := "✓"
		if !rec.OK {
			result = "✗ " + sanitizeString(oneLine(firstNonEmpty(rec.Reason, endWord(rec))))
		}
		if !rec.counted() {
			result = "· " + sanitizeString(oneLine(firstNonEmpty(rec.Reason, endWord(rec))))
		}
		progress := "-"
		if p := rec.Progress; p != nil {
			progress = fmt.Sprintf("%d/%d", p.Completed, p.Total)
		}
		if rec.Complete {
			progress += " ✓"
		}
		tools := sanitizeString(toolsText(rec, 3))
		if tools == "" {
			tools = "-"
		}
		refused := "-"
		if len(rec.Refused) > 0 {
			refused = sanitizeString(oneLine(strings.Join(rec.Refused, ", ")))
		}
		files := "-"
		if rec.FilesChanged != nil {
			files = strconv.Itoa(len(rec.FilesChanged))
		}
		rows = append(rows, []string{strconv.Itoa(rec.Iteration), start, compactDuration(rec.duration()), result, formatCost(rec.CostUSD), progress, tools, refused, files})
	}
	writeTable(w, rows, width, historyFlexColumns)
}

// historyFlexColumns are the history table's columns that give way to
// the terminal's width: RESULT, TOOLS and REFUSED.
var historyFlexColumns = []int{3, 6, 7}

// minColumnWidth is as narrow as a column that gives way gets (or its
// header, if wider).
const minColumnWidth = 6

// writeTable writes rows as columns two spaces apart, the last one not
// padded; rows[0] is the header. With width > 0, the flex columns give
// way, the widest first, until the lines fit (or each is as narrow as it
// gets); their cells are clipped with "…".
func writeTable(w io.Writer, rows [][]string, width int, flex []int) {
	if len(rows) == 0 {
		return
	}
	cols := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			cols[i] = max(cols[i], displayWidth(c))
		}
	}
	total := func() int {
		n := 2 * (len(cols) - 1)
		for _, c := range cols {
			n += c
		}
		return n
	}
	floor := func(i int) int { return max(minColumnWidth, displayWidth(rows[0][i])) }
	for width > 0 && total() > width {
		widest := -1
		for _, i := range flex {
			if cols[i] > floor(i) && (widest < 0 || cols[i] > cols[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		cols[widest]-- // one at a time: the columns end up alike
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r {
			c = clipWidth(c, cols[i])
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", cols[i]-displayWidth(c)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// wrapParts breaks a line of parts joined by sep into lines of at most
// width columns (0: any), at the separators; the lines after the first
// are indented by two spaces.
func wrapParts(line, sep string, width int) []string {
	if width <= 0 || displayWidth(line) <= width {
		return []string{line}
	}
	var out []string
	cur := ""
	for _, part := range strings.Split(line, sep) {
		switch {
		case cur == "":
			cur = part
		case displayWidth(cur+sep+part) <= width:
			cur += sep + part
		default:
			out = append(out, cur)
			cur = "  " + part
		}
	}
	return append(out, cur)
}

// outputWidth is the width the command's output should fit: $COLUMNS
// when set, else the terminal's when standard output is one, else 0 (a
// pipe or a file: any).
func outputWidth(out io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := out.(*os.File); ok && isTerminal(f) {
		return terminalWidth(f)
	}
	return 0
}

func sameDay(a, b time.Time) bool {
	a, b = a.Local(), b.Local()
	return a.YearDay() == b.YearDay() && a.Year() == b.Year()
}

// sparkLevels are the bars of a sparkline, lowest first.
var sparkLevels = []rune("▁▂▃▄▅▆▇█")

// maxChartWidth bounds a chart's bars: a longer run is shown by its last
// iterations.
const maxChartWidth = 60

// sparkline draws vs as bars scaled from 0 to the largest.
func sparkline(vs []float64) string {
	top := 0.0
	for _, v := range vs {
		top = max(top, v)
	}
	var b strings.Builder
	for _, v := range vs {
		i := 0
		if top > 0 && v > 0 {
			i = min(int(v/top*float64(len(sparkLevels)-1)+0.5), len(sparkLevels)-1)
		}
		b.WriteRune(sparkLevels[i])
	}
	return b.String()
}

// showChart draws a run's durations, costs and progress per iteration,
// at most bars of them (the last ones).
func showChart(w io.Writer, recs []*iterationRecord, bars int) {
	shown := recs
	note := ""
	if len(shown) > bars {
		shown = shown[len(shown)-bars:]
		note = fmt.Sprintf(" (the last %d iterations)", bars)
	}
	var durs, costs, prog []float64
	p := 0.0
	var maxDur time.Duration
	maxCost := 0.0
	hasProgress := false
	for _, rec := range shown {
		durs = append(durs, float64(rec.DurationMS))
		costs = append(costs, rec.CostUSD)
		maxDur, maxCost = max(maxDur, rec.duration()), max(maxCost, rec.CostUSD)
		// A record that does not say (a verification) keeps the
		// progress before it, rather than drawing a drop to 0.
		if rec.Progress != nil && rec.Progress.Total > 0 {
			p, hasProgress = float64(rec.Progress.Completed)/float64(rec.Progress.Total), true
		}
		prog = append(prog, p)
	}
	fmt.Fprintf(w, "  time      %s  max %s%s\n", sparkline(durs), compactDuration(maxDur), note)
	fmt.Fprintf(w, "  cost      %s  max %s\n", sparkline(costs), formatCost(maxCost))
	if hasProgress {
		var from, to *progressRep
		for _, rec := range shown {
			if rec.Progress != nil {
				if from == nil {
					from = rec.Progress
				}
				to = rec.Progress
			}
		}
		// Progress is drawn against the whole task, not the largest value.
		prog = append(prog, 1)
		line := sparkline(prog)
		line = string([]rune(line)[:len(prog)-1])
		fmt.Fprintf(w, "  progress  %s  %d/%d → %d/%d\n", line, from.Completed, from.Total, to.Completed, to.Total)
	}
}
