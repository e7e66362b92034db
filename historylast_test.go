package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lastRunHistory is a history of an earlier run of 3 records, then a run of
// n, with failures, an interruption, a usage limit's attempt, a
// verification, a fallback to codex (estimated costs) and costs that vary.
func lastRunHistory(n int) []byte {
	var buf bytes.Buffer
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(rec *iterationRecord) {
		data, _ := json.Marshal(rec)
		buf.Write(data)
		buf.WriteByte('\n')
	}
	for i := 1; i <= 3; i++ {
		write(&iterationRecord{Run: "100-1", Iteration: i, StartedAt: start, DurationMS: 1000, End: endDone, OK: true, CostUSD: 0.5})
	}
	for i := 1; i <= n; i++ {
		rec := &iterationRecord{Run: "4242-1795546444162582082", Iteration: i, StartedAt: start.Add(time.Duration(i) * time.Minute),
			DurationMS: int64(1000 + i*37%5000), End: endDone, OK: true, CostUSD: boundedSum(0, float64(i%97)*0.00137), Turns: i % 13,
			Tools: map[string]int{"Bash": i % 4, "Edit": 2}, FilesChanged: []string{"src/a.go"}, Progress: &progressRep{Completed: i, Total: n},
			Reason: "", Agent: "claude"}
		switch {
		case i%11 == 0:
			rec.End, rec.OK, rec.Reason = endFailed, false, "agent exited with status 1 without a result"
		case i%29 == 0:
			rec.End, rec.OK = endLimit, false
		case i%31 == 0:
			rec.End, rec.OK = endVerify, false
		case i%17 == 0:
			rec.Agent, rec.CostEstimated = "codex", true
		}
		write(rec)
	}
	return buf.Bytes()
}

// historyTable is what history shows of h: all of it, or its last n.
func historyTable(t testing.TB, h *historyFileReader, last int) string {
	from := int64(0)
	if last > 0 {
		var err error
		if from, err = h.startOfLast(last, nil); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if _, _, err := showRuns(&out, h, from, nil, 0); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestHistoryLastTotals pins that history --last N, which reads the
// shown run's earlier records for its totals alone (recordTotalsOf), gives
// the run the header the whole history gives it: the same iterations,
// failures, time, cost and its ≈.
func TestHistoryLastTotals(t *testing.T) {
	h, _ := writeHistory(t, lastRunHistory(3000))
	full := historyTable(t, h, 0)
	last := historyTable(t, h, 5)
	header := func(table string) string {
		for _, l := range strings.Split(table, "\n") {
			if strings.HasPrefix(l, "Run 4242-") {
				return l
			}
		}
		t.Fatalf("no header of the last run in:\n%s", table)
		return ""
	}
	want := header(full) + " · the last 5 shown"
	if got := header(last); got != want {
		t.Errorf("history --last 5 header:\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(want, "≈$") || !strings.Contains(want, "failed)") {
		t.Errorf("the history is meant to have failures and an estimated cost: %q", want)
	}
	if strings.Contains(last, "Run 100-1") {
		t.Errorf("history --last 5 shows the earlier run:\n%s", last)
	}
	rows := 0
	for _, l := range strings.Split(last, "\n") {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "2996" || f[0] == "2997" || f[0] == "2998" || f[0] == "2999" || f[0] == "3000") {
			rows++
		}
	}
	if rows != 5 {
		t.Errorf("history --last 5 shows %d of the last 5 rows:\n%s", rows, last)
	}
}

// BenchmarkHistoryLast5 is history --last 5 (the table) on a run of
// 12,288 records, as tryout 7 timed it: the run's earlier records are read
// for its totals alone.
func BenchmarkHistoryLast5(b *testing.B) {
	path := filepath.Join(b.TempDir(), historyFile)
	if err := os.WriteFile(path, lastRunHistory(12288), 0o600); err != nil {
		b.Fatal(err)
	}
	h, err := openHistoryReader(path)
	if err != nil {
		b.Fatal(err)
	}
	defer h.close()
	for b.Loop() {
		historyTable(b, h, 5)
	}
}

// TestRecordTotalsOf pins that the fast read of a record's totals gives
// what encoding/json gives of the same fields, and the same "not a
// record", whatever the line: its fast path gives up on what it does not
// take as encoding/json does.
func TestRecordTotalsOf(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(string(lastRunHistory(40))), "\n")
	lines = append(lines,
		`{"run":"a","iteration":2,"startedAt":"2026-01-01T00:00:00.5Z","durationMs":5,"costUsd":0.25,"costEstimated":true,"ok":false,"end":"failed","turns":3,"agent":"codex"}`,
		`{"run":"a","iteration":2,"RUN":"b"}`,
		`{"run":"a","iteration":2,"iteration":3}`,
		`{"run":"a","iteration":"2"}`,
		`{"run":"a","iteration":2,"startedAt":null,"costUsd":null}`,
		`{"run":"a","iteration":2,"startedAt":"yesterday"}`,
		`{"run":"a","iteration":2.5}`,
		`{"run":"a","iteration":2,"tools":{"Bash":1},"extra":[1,{"x":"\u00e9"}]}`,
		`{"run":"a","iteration":2} trailing`,
		`{"run":"","iteration":2}`,
		`{"run":"a","iteration":0}`,
		`[1,2]`, `null`, `{"run":"a","iteration":2,"ok":"yes"}`,
	)
	for _, l := range lines {
		got := recordTotalsOf([]byte(l))
		var want *iterationRecord
		var r recordTotals
		if json.Unmarshal([]byte(l), &r) == nil && r.Run != "" && r.Iteration >= 1 {
			want = &iterationRecord{Run: r.Run, Iteration: r.Iteration, StartedAt: r.StartedAt, DurationMS: r.DurationMS,
				Agent: r.Agent, End: r.End, OK: r.OK, CostUSD: r.CostUSD, CostEstimated: r.CostEstimated, Turns: r.Turns}
		}
		switch {
		case (got == nil) != (want == nil):
			t.Errorf("recordTotalsOf(%s) = %v, want %v", l, got, want)
		case got != nil && (got.Run != want.Run || got.Iteration != want.Iteration || !got.StartedAt.Equal(want.StartedAt) ||
			got.DurationMS != want.DurationMS || got.Agent != want.Agent || got.End != want.End || got.OK != want.OK ||
			got.CostUSD != want.CostUSD || got.CostEstimated != want.CostEstimated || got.Turns != want.Turns):
			t.Errorf("recordTotalsOf(%s) = %+v, want %+v", l, *got, *want)
		}
	}
}
