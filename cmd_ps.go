package main

// This file implements the ps command: one line per live run of the
// machine (runview.go makes them from the registry), or a JSON array. The
// rules are: the runs waiting for a person come first; the table fits the
// terminal's width, dropping the least useful columns first.

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// psUsage is the manual of the ps command.
const psUsage = `Usage: claude-iterate ps [--json] [--project]

Lists the runs going on on this machine, in every project: one line per
run with its project, workspace, state, iteration n/max, elapsed time,
cost, tasks' progress and what the agent is doing now. The runs waiting
for an answer come first.

The states: running, waiting for an answer, usage-limit wait, verifying,
delay (between iterations), stopping, suspended (Ctrl+Z in its terminal,
its elapsed time stopped till fg); a run that ended but is still there
(its last notifications going out): the status it ended with (completed,
stopped, failed, interrupted), and the reason as what it does now.

Every run registers itself in $XDG_STATE_HOME/claude-iterate/runs/
(~/.local/state/claude-iterate/runs/ by default, on macOS too) when it
starts, and unregisters when it ends; the entry of a run that was killed
(kill -9) or of a machine that rebooted is removed by the next ps.

Options:
  --json       a JSON array, one object per run: id, project, workspace,
               path, agent, state (running, waiting, limit, verifying,
               delay, stopping, suspended, or how it ended), iteration,
               maxIterations, elapsedMs,
               costUsd, progress ({"completed", "total"} or null), now,
               question (or null), pid, stopRequested, dryRun (true
               for a dry run, whose path is its scratch copy)
  --project    only the runs of this directory's project

Exit status: 0 listed; 1 error; 2 usage error.

Examples:
  claude-iterate ps
  claude-iterate ps --project
  claude-iterate ps --json
`

func runPS(env *cliEnv, args []string) error {
	fs := newFlagSet("ps")
	asJSON := fs.Bool("json", false, "")
	here := fs.Bool("project", false, "")
	if _, err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	project := ""
	if *here {
		project = env.projectRoot
	}
	runs, err := liveRuns(project)
	if err != nil {
		return err
	}
	if *asJSON {
		if runs == nil {
			runs = []runView{}
		}
		data, err := json.MarshalIndent(runs, "", "  ")
		if err != nil {
			return err
		}
		_, err = env.stdout.Write(append(data, '\n'))
		return writeError(err)
	}
	return writeError(writePS(env.stdout, runs, *here))
}

// writePS prints runs as ps's table; here: of this project only.
func writePS(w io.Writer, runs []runView, here bool) error {
	if len(runs) == 0 {
		msg := "No run is going on."
		if here {
			msg = "No run of this project is going on."
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	}
	rows := make([][]string, len(runs))
	for i, v := range runs {
		rows[i] = psRow(v)
		rows[i][len(rows[i])-1] = clipWidth(rows[i][len(rows[i])-1], 60)
	}
	// Fitted to a terminal or $COLUMNS as watch --all's live table is,
	// rather than wrapped; a pipe or a file gets every column (writeTable).
	return writeTable(w, psHeader, rows, psPriorities, len(psHeader)-1)
}

// psHeader is the table's header; psPriorities say which columns a narrow
// terminal keeps (watch --all): the higher, the later dropped; the last
// column is clipped before it is dropped.
var (
	psHeader     = []string{"PROJECT", "WORKSPACE", "STATE", "ITERATION", "ELAPSED", "COST", "PROGRESS", "NOW"}
	psPriorities = []int{1, prioKeep, 8, 6, 3, 4, 2, 5}
)

// psRow is v's row of the table, sanitized.
func psRow(v runView) []string {
	ws := sanitizeString(clipWidth(v.Workspace, 24))
	if v.DryRun {
		ws += " (dry run)"
	}
	return []string{sanitizeString(clipWidth(firstNonEmpty(v.ProjectName, filepath.Base(v.Project)), 24)), ws,
		stateWords(v.State), iterationText(v), compactDuration(time.Duration(v.ElapsedMS) * time.Millisecond),
		costText(v.CostUSD, v.CostEstimated), progressText(v.Progress), sanitizeString(oneLine(v.Now))}
}

// fitTable lays out a table in w columns: columns two spaces apart, the
// lowest-priority ones dropped and the last one clipped until it fits.
func fitTable(header []string, rows [][]string, prio []int, w int) (string, []string) {
	return fitColumns(header, rows, prio, w, len(header)-1)
}

// fitColumns is fitTable with the column that is clipped named: flex.
func fitColumns(header []string, rows [][]string, prio []int, w, flex int) (string, []string) {
	n := len(header)
	widths := make([]int, n)
	for i, h := range header {
		widths[i] = displayWidth(h)
		for _, r := range rows {
			widths[i] = max(widths[i], displayWidth(r[i]))
		}
	}
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = true
	}
	total := func() int {
		t, k := 0, 0
		for i, ok := range keep {
			if ok {
				t, k = t+widths[i], k+1
			}
		}
		return t + 2*max(k-1, 0)
	}
	for total() > w {
		if over := total() - w; keep[flex] && widths[flex]-over >= minFlexWidth {
			widths[flex] -= over
			break
		}
		low := -1
		for i, ok := range keep {
			if ok && prio[i] < prioKeep && (low < 0 || prio[i] < prio[low]) {
				low = i
			}
		}
		if low < 0 {
			break
		}
		keep[low] = false
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			if !keep[i] {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("  ")
			}
			c = clipWidth(c, widths[i])
			b.WriteString(c)
			if i != n-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)))
			}
		}
		return clipWidth(strings.TrimRight(b.String(), " "), w)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = line(r)
	}
	return line(header), out
}

// iterationText is "3/50", or "-" before the first iteration.
func iterationText(v runView) string {
	if v.Iteration == 0 {
		return "-"
	}
	return strconv.Itoa(v.Iteration) + "/" + strconv.Itoa(v.MaxIterations)
}

// progressText is "35/60", or "-".
func progressText(p *progressRep) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", p.Completed, p.Total)
}

// questionLine is v's question on one line, or "".
func questionLine(v runView) string {
	if v.Question == nil {
		return ""
	}
	return strings.TrimSpace(oneLine(*v.Question))
}
