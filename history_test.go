package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseHistory(t *testing.T) {
	good := `{"run":"1-2","iteration":1,"ok":true,"costUsd":0.5,"end":"done"}`
	limit := `{"run":"1-2","iteration":2,"ok":false,"costUsd":0.25,"end":"limit"}`
	failed := `{"run":"1-2","iteration":2,"ok":false,"costUsd":0.25,"end":"failed","reason":"x"}`
	tests := []struct {
		in                   string
		records, skipped     int
		iterations, failures int
		cost                 float64
	}{
		{"", 0, 0, 0, 0, 0},
		{good + "\n", 1, 0, 1, 0, 0.5},
		{good + "\n" + limit + "\n" + failed + "\n", 3, 0, 2, 1, 1},
		{good + "\n" + `{"run":"1-2","itera`, 1, 1, 1, 0, 0.5}, // torn last line
		{good + "\nnot json\n\n[]\n{}\n" + good, 2, 3, 2, 0, 1},
		{`{"run":"","iteration":1}` + "\n" + `{"run":"a","iteration":0}`, 0, 2, 0, 0, 0},
	}
	for _, tt := range tests {
		h := parseHistory([]byte(tt.in))
		var tot workTotals
		for _, rec := range h.records {
			tot.add(rec)
		}
		if len(h.records) != tt.records || h.skipped != tt.skipped || tot.Iterations != tt.iterations || tot.FailedIterations != tt.failures || tot.CostUSD != tt.cost {
			t.Errorf("parseHistory(%q) = %d records, %d skipped, %+v; want %d, %d, %d iterations, %d failed, $%v",
				tt.in, len(h.records), h.skipped, tot, tt.records, tt.skipped, tt.iterations, tt.failures, tt.cost)
		}
	}
}

func TestBoundedSum(t *testing.T) {
	tests := []struct{ total, cost, want float64 }{
		{1, 2, 3},
		{1, -2, 1},
		{1, 0, 1},
		{0, 1.79e308, maxCostUSD},
		{maxCostUSD, 1.79e308, maxCostUSD},
	}
	for _, tt := range tests {
		if got := boundedSum(tt.total, tt.cost); got != tt.want {
			t.Errorf("boundedSum(%v, %v) = %v; want %v", tt.total, tt.cost, got, tt.want)
		}
	}
	var nan float64
	nan = nan / nan
	if got := boundedSum(1, nan); got != 1 {
		t.Errorf("boundedSum(1, NaN) = %v; want 1", got)
	}
	// Two huge costs still make a total that JSON can hold.
	var w workTotals
	w.add(&iterationRecord{End: endDone, OK: true, CostUSD: 1.79e308})
	w.add(&iterationRecord{End: endDone, OK: true, CostUSD: 1.79e308})
	if _, err := json.Marshal(w); err != nil {
		t.Errorf("totals of huge costs cannot be saved: %v", err)
	}
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		in   []float64
		want string
	}{
		{[]float64{0, 0}, "▁▁"},
		{[]float64{1, 2, 4, 8}, "▂▃▅█"},
		{[]float64{5}, "█"},
		{[]float64{0, 7}, "▁█"},
	}
	for _, tt := range tests {
		if got := sparkline(tt.in); got != tt.want {
			t.Errorf("sparkline(%v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestSelectRun(t *testing.T) {
	ids := []string{"100-1", "100-2", "200-3"}
	tests := []struct{ sel, want, err string }{
		{"100-2", "100-2", ""},
		{"200-", "200-3", ""},
		{"1", "100-1", ""},
		{"-1", "200-3", ""},
		{"100-", "", "ambiguous"},
		{"4", "", "no run 4"},
		// a number is a run's number, never an id's start (ids start
		// with a pid)
		{"20", "", "no run 20: the history holds 3 runs"},
		{"200", "", "no run 200"},
		{"-4", "", "no run -4"},
		{"x", "", `no run "x"`},
	}
	for _, tt := range tests {
		got, err := selectRun(ids, tt.sel)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("selectRun(%q) = %q, %v; want %q, %q", tt.sel, got, err, tt.want, tt.err)
		}
	}
}

// historyOf makes a history of n realistic records.
func historyOf(n int) []byte {
	var buf bytes.Buffer
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		rec := &iterationRecord{Run: "4242-1795546444162582082", Iteration: i, StartedAt: start.Add(time.Duration(i) * time.Minute),
			DurationMS: 41234, End: endDone, OK: true, CostUSD: 0.1234, Turns: 12,
			Tokens:   &tokenCounts{Input: 1200, Output: 4500, CacheRead: 100000, CacheCreation: 700},
			Tools:    map[string]int{"Bash": 3, "Edit": 2, "Read": 7},
			Refused:  []string{`Bash "make test"`},
			Progress: &progressRep{Completed: i, Total: n}, FilesChanged: []string{"src/a.go", "src/b_test.go"},
		}
		data, _ := json.Marshal(rec)
		buf.Write(data)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// BenchmarkReadHistory10k reads a 10,000-iteration history (target: under
// 100 ms).
func BenchmarkReadHistory10k(b *testing.B) {
	path := filepath.Join(b.TempDir(), historyFile)
	if err := os.WriteFile(path, historyOf(10000), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n := 0
		if _, err := eachRecord(path, func(*iterationRecord) { n++ }); err != nil || n != 10000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkFilesChanged10k measures what filesChanged costs per iteration
// (two git status snapshots and the comparison) in a git repository of
// 10,000 files, one of them changed.
func BenchmarkFilesChanged10k(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	dir := b.TempDir()
	for i := range 10000 {
		sub := filepath.Join(dir, fmt.Sprintf("d%02d", i%100))
		os.MkdirAll(sub, 0o755)
		os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.go", i)), []byte("package x\n"), 0o644)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"}} {
		if out, err := runGit(dir, args...); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	g := findGitTree(dir)
	if g == nil {
		b.Fatal("no git tree found")
	}
	target := filepath.Join(dir, "d00", "f00000.go")
	for i := 0; b.Loop(); i++ {
		before := g.snapshot()
		os.WriteFile(target, []byte(fmt.Sprintf("package x // %d\n", i)), 0o644)
		if files := g.changed(before, g.snapshot()); files == nil {
			b.Fatal("no snapshot")
		}
	}
}

// TestParseHistoryParallel: a long history is parsed in pieces, and read
// back whole and in order, a torn line included.
func TestParseHistoryParallel(t *testing.T) {
	data := historyOf(5000)
	data = append(data, `{"run":"x","itera`...)
	h := parseHistory(data)
	if len(h.records) != 5000 || h.skipped != 1 {
		t.Fatalf("parseHistory: %d records, %d skipped; want 5000, 1", len(h.records), h.skipped)
	}
	for i, rec := range h.records {
		if rec.Iteration != i+1 {
			t.Fatalf("record %d is iteration %d", i, rec.Iteration)
		}
	}
}

// TestToolNames pins the order of a record's tools: most used first, then
// by name (here the names' order is not the counts').
func TestToolNames(t *testing.T) {
	rec := &iterationRecord{Tools: map[string]int{"Bash": 1, "Read": 3, "Edit": 1, "Write": 2}}
	if got, want := strings.Join(rec.toolNames(), " "), "Read Write Bash Edit"; got != want {
		t.Errorf("toolNames = %q, want %q", got, want)
	}
}

// TestHistoryFit pins how the history table gives way to a narrow
// output: nothing dropped while the row fits (exactly, too), then the
// columns in historyPriorities' order, lowest first, one at a time, and
// never "#" or RESULT.
func TestHistoryFit(t *testing.T) {
	// # START TIME RESULT COST PROGRESS TOOLS REFUSED FILES, the flexible
	// ones (RESULT, TOOLS, REFUSED) at their narrowest already: a row is
	// 48 columns of cells and 8 gaps of 2, 64 in all.
	widths := [len(historyColumns)]int{1, 8, 3, 6, 7, 5, 6, 7, 5}
	dropOrder := []string{"FILES", "REFUSED", "TOOLS", "START", "TIME", "PROGRESS", "COST"}
	for width := 70; width >= 1; width-- {
		s := &runSummary{widths: widths}
		s.fit(width)
		var hidden []string
		cells, shown := 0, 0
		for i, h := range s.hidden {
			if h {
				hidden = append(hidden, historyColumns[i])
			} else {
				cells, shown = cells+s.widths[i], shown+1
			}
		}
		slices.SortFunc(hidden, func(a, b string) int { return slices.Index(dropOrder, a) - slices.Index(dropOrder, b) })
		if !slices.Equal(hidden, dropOrder[:len(hidden)]) {
			t.Fatalf("width %d: dropped %q, want the first of %q", width, hidden, dropOrder)
		}
		for _, c := range historyFlexColumns {
			if floor := max(minColumnWidth, displayWidth(historyColumns[c])); !s.hidden[c] && s.widths[c] < floor {
				t.Errorf("width %d: %s narrowed to %d, below its %d", width, historyColumns[c], s.widths[c], floor)
			}
		}
		fits := cells+2*(shown-1) <= width
		switch {
		case width >= 64 && len(hidden) > 0:
			t.Errorf("width %d: dropped %q from a row of 64", width, hidden)
		case width == 63 && !slices.Equal(hidden, []string{"FILES"}):
			t.Errorf("width 63: dropped %q, want FILES alone", hidden)
		case !fits && len(hidden) < len(dropOrder):
			t.Errorf("width %d: a row of %d with %q dropped, and more could go", width, cells+2*(shown-1), hidden)
		case fits && len(hidden) > 0:
			// the last column dropped was needed: with it the row is too wide
			last := slices.Index(historyColumns[:], hidden[len(hidden)-1])
			if with := cells + s.widths[last] + 2*shown; with <= width {
				t.Errorf("width %d: dropped %s, though a row of %d with it fits", width, historyColumns[last], with)
			}
		}
	}
	// the flexible columns give way the widest first, the first of equals
	// first: one column too many narrows RESULT, not TOOLS
	s := &runSummary{widths: [len(historyColumns)]int{1, 8, 3, 10, 7, 5, 10, 7, 5}}
	s.fit(71)
	if s.hidden != [len(historyColumns)]bool{} || s.widths[3] != 9 || s.widths[6] != 10 {
		t.Errorf("fit(71) of a row of 72: hidden %v, widths %v; want none hidden, RESULT 9, TOOLS 10", s.hidden, s.widths)
	}
}

// TestSameDay pins when the history table dates a row: the same day of
// another year, or the next day, is not the day the run started.
func TestSameDay(t *testing.T) {
	noon := time.Date(2026, 3, 5, 12, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		b    time.Time
		want bool
	}{
		{noon.Add(time.Hour), true},
		{noon.AddDate(1, 0, 0), false},
		{noon.AddDate(0, 0, 1), false},
		{noon.AddDate(0, 1, 0), false},
	} {
		if got := sameDay(noon, tc.b); got != tc.want {
			t.Errorf("sameDay(%v, %v) = %v, want %v", noon, tc.b, got, tc.want)
		}
	}
}

// TestShowChart pins the chart under a run's table: the bars and maxima of
// time and cost (≈ when the largest cost was estimated), the progress drawn
// against the whole task and kept through a record that does not say, and
// the note when only the last iterations fit.
func TestShowChart(t *testing.T) {
	rec := func(ms int64, cost float64, est bool, done, total int) *iterationRecord {
		r := &iterationRecord{DurationMS: ms, CostUSD: cost, CostEstimated: est}
		if total >= 0 {
			r.Progress = &progressRep{Completed: done, Total: total}
		}
		return r
	}
	recs := []*iterationRecord{
		rec(1000, 0.01, false, 1, 4),
		rec(4000, 0.04, true, 2, 4),
		rec(2000, 0.04, false, 0, -1), // says nothing: progress kept
		rec(3000, 0.02, false, 0, 0),  // a total of 0: progress kept
		rec(2000, 0.02, false, 4, 5),
	}
	for _, tc := range []struct {
		bars int
		want string
	}{
		{5, "  time      ▃█▅▆▅  max 4s\n" +
			"  cost      ▃██▅▅  max ≈$0.0400\n" +
			"  progress  ▃▅▅▅▇  1/4 → 4/5\n"},
		{4, "  time      █▅▆▅  max 4s (the last 4 iterations)\n" +
			"  cost      ██▅▅  max ≈$0.0400\n" +
			"  progress  ▅▅▅▇  2/4 → 4/5\n"},
	} {
		var b strings.Builder
		showChart(&b, recs, tc.bars, 0)
		if b.String() != tc.want {
			t.Errorf("bars %d:\n%s\nwant:\n%s", tc.bars, b.String(), tc.want)
		}
	}
	// The largest cost not estimated, an equal estimated one before it:
	// still ≈ (either may be the one shown).
	var b strings.Builder
	showChart(&b, []*iterationRecord{rec(1000, 0.05, true, 0, -1), rec(1000, 0.05, false, 0, -1)}, 5, 0)
	if !strings.Contains(b.String(), "max ≈$0.0500") || strings.Contains(b.String(), "progress") {
		t.Errorf("equal costs, the first estimated:\n%s", b.String())
	}
	b.Reset()
	showChart(&b, []*iterationRecord{rec(1000, 0.05, true, 0, -1), rec(1000, 0.07, false, 0, -1)}, 5, 0)
	if !strings.Contains(b.String(), "max $0.0700") {
		t.Errorf("a larger cost not estimated after an estimated one:\n%s", b.String())
	}
}
