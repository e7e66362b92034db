package main

// This file implements the history command: a workspace's iteration
// records (history.go), for people as a table per run under a chart of its
// durations, costs and progress, and for programs as JSON Lines. The rules
// are: runs are shown oldest first, each with its totals (the sums of its
// records, as everywhere), a run being a stretch of records with its id (a
// run's records are written together: one run of a workspace at a time);
// lines of the file that are not records are skipped and counted in one
// warning; --last N reads from the end of the file, and a run's header
// still gives the totals of all its records (a verification's time
// included) and says how many are shown; whatever the history's length,
// the command holds a chunk of it and one run's summary, never the whole
// (historyscan.go); the table fits the output's width ($COLUMNS, else the
// terminal's; a pipe: any), its flexible columns cut short with "…"; it
// reads, never writes.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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
width: the result, tools and refused calls are cut short with "…", and
on a narrow one the files, refused calls, tools and start go. With
--last N, a run's header still gives its totals, and says N are shown.
A workspace in a git worktree (run --worktree) ends with a line on its
branch: commits ahead of and behind its base, uncommitted files, merged.
Without <workspace>, shows the ralph-mode run of the current directory.

Options:
  --json      print the records as JSON Lines, one per iteration, with the
              fields: run, iteration, startedAt, durationMs, end (done, failed,
              refused, hang, interrupted, limit), ok, reason, costUsd, turns,
              tokens, tools, refused, progress, complete, worked, tests,
              filesChanged, and, in a run that commits (run --worktree or
              --commit), commit (the sha the iteration ended with, or null),
              commitError (why its commit failed) and commitLeftOut (files
              of yours its commit left out)
  --run ID    only the run ID (as shown, or a prefix of it with more than
              digits), or the Nth run (a number: 1 is the first, -1 the last)
  --last N    only the last N iterations

Exit status: 0 shown; 1 error (no such workspace or run); 2 usage error.

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
	if err := runSel.notBlank("--run"); err != nil {
		return err
	}
	if last.set && last.n == 0 {
		return usagef("invalid value \"0\" for flag --last: must be at least 1")
	}
	w, err := lookUpFromArgs(env, pos)
	if err != nil {
		return err
	}
	h, err := openHistoryReader(w.historyPath())
	if err != nil {
		shown := relPath(env.projectRoot, w.historyPath())
		if hint := fileFaultHint(w.historyPath(), shown, err); hint != "" {
			return withHint(fmt.Errorf("reading the history %s: %w", shown, errors.Unwrap(err)), "%s", hint)
		}
		return err
	}
	defer h.close()
	var match func(*iterationRecord) bool
	skipped := -1 // -1: counted by the pass that shows
	if runSel.set {
		ids, n, err := historyRuns(h)
		if err != nil {
			return err
		}
		id, err := selectRun(ids, runSel.s)
		if err != nil {
			return err
		}
		match, skipped = func(rec *iterationRecord) bool { return rec.Run == id }, n
	}
	from := int64(0)
	if last.set {
		if from, err = h.startOfLast(last.n, match); err != nil {
			return err
		}
	}
	out := &errWriter{w: env.stdout}
	var shown, n int
	if *asJSON {
		shown, n, err = printRecords(out, h, from, match)
	} else {
		shown, n, err = showRuns(out, h, from, match, outputWidth(env.stdout))
	}
	if err != nil {
		return err
	}
	if skipped < 0 {
		skipped = n
	}
	if skipped > 0 {
		size := "" // of lines too long, or through a hole: one may be gigabytes
		if h.longBytes > 0 {
			size = fmt.Sprintf(" (%s in lines over %d MiB or of NUL bytes)", byteSize(h.longBytes), maxHistoryLine>>20)
		}
		fmt.Fprintf(env.stderr, "%s: warning: %s of %s skipped%s: not iteration records (a run that crashed mid-write?)\n", progName, plural(skipped, "line"), relPath(env.projectRoot, w.historyPath()), size)
	}
	if shown == 0 && !*asJSON {
		fmt.Fprintf(out, "No iterations recorded for %s yet.\n", w.Name)
	}
	if v := viewGit(env, w); v != nil && !*asJSON { // gitstate.go
		fmt.Fprintf(out, "Git: %s\n", sanitizeString(v.text(env.projectRoot))) // git's error may name a file
	}
	return writeError(out.err)
}

// historyRuns lists the run ids of a history, in order, and how many lines
// were skipped.
func historyRuns(h *historyFileReader) ([]string, int, error) {
	var ids []string
	seen := map[string]bool{}
	s := h.stream(0)
	for rec := s.record(); rec != nil; rec = s.record() {
		if !seen[rec.Run] {
			seen[rec.Run] = true
			ids = append(ids, rec.Run)
		}
	}
	return ids, s.skipped, s.err
}

// matching returns the next record of s that match accepts (nil: any), or
// nil at the end.
func matching(s *historyStream, match func(*iterationRecord) bool) *iterationRecord {
	for rec := s.record(); rec != nil; rec = s.record() {
		if match == nil || match(rec) {
			return rec
		}
	}
	return nil
}

// printRecords prints the records from offset from that match accepts as
// JSON Lines, and returns how many, and how many lines were skipped.
func printRecords(out io.Writer, h *historyFileReader, from int64, match func(*iterationRecord) bool) (shown, skipped int, err error) {
	s := h.stream(from)
	for rec := matching(s, match); rec != nil; rec = matching(s, match) {
		data, err := json.Marshal(rec)
		if err != nil {
			return shown, s.skipped, err
		}
		out.Write(append(data, '\n'))
		shown++
	}
	return shown, s.skipped, s.err
}

// showRuns prints the records from offset from that match accepts, run by
// run (a stretch of records of one run), each with its totals and chart
// above its table, in width columns (0: any), and returns how many, and how
// many lines were skipped. The history is read twice at once, in step:
// ahead, to sum up a run before it is shown; then for its rows. What is
// held is one run's summary and a chunk of each read, however long the
// history. The first run's records before from (left out by --last) count
// in its totals, read once more.
func showRuns(w io.Writer, h *historyFileReader, from int64, match func(*iterationRecord) bool, width int) (shown, skipped int, err error) {
	ahead, rows := h.stream(from), h.stream(from)
	next := matching(ahead, match)
	for next != nil {
		sum := &runSummary{id: next.Run, first: next.StartedAt, firstShown: next.StartedAt}
		if shown == 0 && from > 0 {
			if err := sum.addEarlier(h, from, match); err != nil {
				return shown, ahead.skipped, err
			}
		}
		for ; next != nil && next.Run == sum.id; next = matching(ahead, match) {
			sum.add(next)
		}
		if shown > 0 {
			fmt.Fprintln(w)
		}
		sum.show(w, width, func() *iterationRecord { return matching(rows, match) })
		shown += sum.n
	}
	if ahead.err != nil {
		return shown, ahead.skipped, ahead.err
	}
	return shown, ahead.skipped, rows.err
}

// selectRun finds the run sel names: an id, a position (1 the first, -1
// the last), or a unique prefix of an id.
func selectRun(ids []string, sel string) (string, error) {
	for _, id := range ids {
		if id == sel {
			return id, nil
		}
	}
	// A number is a run's number, never the start of an id (ids start
	// with a pid: "3" would pick the run of pid 3xxx).
	if n, err := strconv.Atoi(sel); err == nil {
		switch {
		case n >= 1 && n <= len(ids):
			return ids[n-1], nil
		case n <= -1 && -n <= len(ids):
			return ids[len(ids)+n], nil
		}
		return "", withHint(fmt.Errorf("no run %d: the history holds %s", n, plural(len(ids), "run")), "use 1 to %d, or -1 for the last (a run's id: more of it than digits)", len(ids))
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
	return "", withHint(fmt.Errorf("no run %q in the history", sel), "claude-iterate history <workspace> shows the runs' ids")
}

// historyColumns are the headings of a run's table.
var historyColumns = [...]string{"#", "START", "TIME", "RESULT", "COST", "PROGRESS", "TOOLS", "REFUSED", "FILES"}

// historyFlexColumns are the history table's columns that give way to
// the output's width: RESULT, TOOLS and REFUSED.
var historyFlexColumns = []int{3, 6, 7}

// historyPriorities say which columns a narrow output drops first (the
// lowest), as ps's table does (fitTable): FILES, REFUSED, TOOLS, START,
// TIME, PROGRESS, COST; # and RESULT stay.
var historyPriorities = [len(historyColumns)]int{prioKeep, 4, 5, prioKeep, 7, 6, 3, 2, 1}

// minColumnWidth is as narrow as a column that gives way gets (or its
// header, if wider).
const minColumnWidth = 6

// runSummary is what is shown of a run above its rows.
type runSummary struct {
	id         string
	first      time.Time // when its first iteration started
	firstShown time.Time // when its first row's iteration started
	n          int       // its records shown
	earlier    int       // its records before them, not shown (--last)
	totals     workTotals
	elapsed    time.Duration // the time of all its records, a verification's too
	turns      int
	chart      []*iterationRecord // its last rows: all, or over maxChartWidth (up to twice)
	widths     [len(historyColumns)]int
	hidden     [len(historyColumns)]bool // the columns a narrow output drops
	width      int                       // the output's width (0: any)
}

// addEarlier sums up the run's records before offset from (the start of
// its first row's line), those --last leaves out, into its totals only:
// the history is read once, backward from there to the stretch's start
// (a record of another run, or the file's start), each line for the fields the totals read alone
// (recordTotalsOf). A record holds no running totals, so the run's
// records are all read; their sums do not depend on the order (costs are
// rounded to the micro-dollar at each sum: boundedSum).
func (s *runSummary) addEarlier(h *historyFileReader, from int64, match func(*iterationRecord) bool) error {
	return h.eachBeforeBy(from, recordTotalsOf, func(rec *iterationRecord, _ int64) bool {
		if match != nil && !match(rec) {
			return true
		}
		if rec.Run != s.id {
			return false
		}
		s.first = rec.StartedAt // the earliest, once read back to it
		s.earlier++
		s.count(rec)
		return true
	})
}

// count adds a record of the run to its totals.
func (s *runSummary) count(rec *iterationRecord) {
	s.totals.add(rec)
	s.elapsed += rec.duration()
	s.turns += rec.Turns
}

// add sums up one more record of the run, shown as a row.
func (s *runSummary) add(rec *iterationRecord) {
	if s.n == 0 {
		for i, h := range historyColumns {
			s.widths[i] = displayWidth(h)
		}
	}
	s.n++
	s.count(rec)
	if len(s.chart) == 2*maxChartWidth {
		s.chart = append(s.chart[:0], s.chart[maxChartWidth:]...)
	}
	s.chart = append(s.chart, rec)
	for i, c := range rowCells(rec, s.firstShown) {
		s.widths[i] = max(s.widths[i], displayWidth(c))
	}
}

// show prints the run in width columns (0: any): its totals, its chart
// and its table, whose rows are the next s.n records row returns.
func (s *runSummary) show(w io.Writer, width int, row func() *iterationRecord) {
	t := s.totals
	failed := ""
	if t.FailedIterations > 0 {
		failed = fmt.Sprintf(" (%d failed)", t.FailedIterations)
	}
	shown := ""
	if s.earlier > 0 {
		shown = fmt.Sprintf(" · the last %d shown", s.n)
	}
	header := fmt.Sprintf("Run %s · %s · %s%s · %s · %s%s", s.id, s.first.Local().Format("2006-01-02 15:04"),
		plural(t.Iterations, "iteration"), failed, workDuration(s.elapsed), costText(t.CostUSD, t.estimated()), shown)
	for _, line := range wrapParts(header, " · ", width) {
		fmt.Fprintln(w, line)
	}
	bars := maxChartWidth
	if width > 0 {
		// "  progress  " before the bars, at most "  max 1m30s (the last
		// 60 iterations)" after them.
		bars = max(10, min(bars, width-12-34))
	}
	showChart(w, s.chart, bars, width)
	s.fit(width)
	s.printRow(w, historyColumns)
	for i := 0; i < s.n; i++ {
		rec := row()
		if rec == nil {
			return
		}
		s.printRow(w, rowCells(rec, s.firstShown))
	}
}

// pipeColumnWidth bounds a flexible column of a table whose output has no
// width (a pipe, a file): a failure reason of a kilobyte would otherwise
// pad every row of its run to that.
const pipeColumnWidth = 80

// fit drops the lowest-priority columns (historyPriorities) while the
// others do not fit width columns (0: any) even at their narrowest, then
// narrows the flexible columns, the widest first, one column at a time
// (so that they end up alike), until a row fits or each is as narrow as
// it gets.
func (s *runSummary) fit(width int) {
	s.width = width
	if width <= 0 { // a pipe or a file: one long cell must not widen every row
		for _, i := range historyFlexColumns {
			s.widths[i] = min(s.widths[i], pipeColumnWidth)
		}
		return
	}
	floor := func(i int) int { return max(minColumnWidth, displayWidth(historyColumns[i])) }
	total := func(narrowest bool) int {
		t, k := 0, 0
		for i, c := range s.widths {
			if s.hidden[i] {
				continue
			}
			if narrowest && slices.Contains(historyFlexColumns, i) {
				c = min(c, floor(i))
			}
			t, k = t+c, k+1
		}
		return t + 2*max(k-1, 0)
	}
	for total(true) > width {
		low := -1
		for i, p := range historyPriorities {
			if !s.hidden[i] && p < prioKeep && (low < 0 || p < historyPriorities[low]) {
				low = i
			}
		}
		if low < 0 {
			break
		}
		s.hidden[low] = true
	}
	for t := total(false); t > width; t-- {
		widest := -1
		for _, i := range historyFlexColumns {
			if !s.hidden[i] && s.widths[i] > floor(i) && (widest < 0 || s.widths[i] > s.widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			return
		}
		s.widths[widest]--
	}
}

// printRow prints a row of the table, each cell cut short with "…" to its
// column's width, each column but the last padded to it and two spaces
// (as text/tabwriter would, which holds every row of the table until it
// ends), without the columns fit dropped, and cut to the output's width.
func (s *runSummary) printRow(w io.Writer, cells [len(historyColumns)]string) {
	var b strings.Builder
	for i, c := range cells {
		if s.hidden[i] {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("  ")
		}
		c = clipWidth(c, s.widths[i])
		b.WriteString(c)
		b.WriteString(strings.Repeat(" ", s.widths[i]-displayWidth(c)))
	}
	line := strings.TrimRight(b.String(), " ")
	if s.width > 0 {
		line = clipWidth(line, s.width)
	}
	io.WriteString(w, line+"\n")
}

// rowCells are the cells of a record's row in its run's table, whole (the
// table cuts them to its width); first is when the first row's iteration
// started.
func rowCells(rec *iterationRecord, first time.Time) [len(historyColumns)]string {
	start := rec.StartedAt.Local().Format("15:04:05")
	if !sameDay(rec.StartedAt, first) {
		start = rec.StartedAt.Local().Format("01-02 15:04")
	}
	result := "✓"
	if !rec.OK {
		result = "✗ " + sanitizeString(oneLine(firstNonEmpty(rec.Reason, endWord(rec))))
	}
	if !rec.counted() {
		result = "· " + sanitizeString(oneLine(firstNonEmpty(rec.Reason, endWord(rec))))
	}
	if a := rec.Agent; a != "" && (a != agentClaude || rec.AgentChange != "") {
		result += " (" + sanitizeString(a) + ")" // the agent, when not the default
	}
	cost := costText(rec.CostUSD, rec.CostEstimated)
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
	cells := [len(historyColumns)]string{strconv.Itoa(rec.Iteration), start, workDuration(rec.duration()), result, cost, progress, tools, refused, files}
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, "\t", " ")
	}
	return cells
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
func showChart(w io.Writer, recs []*iterationRecord, bars, width int) {
	shown := recs
	note := ""
	if len(shown) > bars {
		shown = shown[len(shown)-bars:]
		note = fmt.Sprintf(" (the last %s)", plural(bars, "iteration"))
	}
	var durs, costs, prog []float64
	p := 0.0
	var maxDur time.Duration
	maxCost, maxEstimated := 0.0, false
	hasProgress := false
	for _, rec := range shown {
		durs = append(durs, float64(rec.DurationMS))
		costs = append(costs, rec.CostUSD)
		if rec.CostUSD > maxCost || (rec.CostUSD == maxCost && rec.CostEstimated) {
			maxEstimated = rec.CostEstimated // the largest cost, marked as its iteration's is
		}
		maxDur, maxCost = max(maxDur, rec.duration()), max(maxCost, rec.CostUSD)
		// A record that does not say (a verification) keeps the
		// progress before it, rather than drawing a drop to 0.
		if rec.Progress != nil && rec.Progress.Total > 0 {
			p, hasProgress = float64(rec.Progress.Completed)/float64(rec.Progress.Total), true
		}
		prog = append(prog, p)
	}
	say := func(format string, args ...any) { // a line cut to width (0: any)
		line := fmt.Sprintf(format, args...)
		if width > 0 {
			line = clipWidth(line, width)
		}
		fmt.Fprintln(w, line)
	}
	say("  time      %s  max %s%s", sparkline(durs), workDuration(maxDur), note)
	say("  cost      %s  max %s", sparkline(costs), costText(maxCost, maxEstimated))
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
		say("  progress  %s  %d/%d → %d/%d", line, from.Completed, from.Total, to.Completed, to.Total)
	}
}
