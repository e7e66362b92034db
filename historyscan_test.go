package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// writeHistory writes data as a history file and opens it for reading.
func writeHistory(t *testing.T, data []byte) (*historyFileReader, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), historyFile)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := openHistoryReader(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.close)
	return h, path
}

// iterationsFrom reads the records from offset from, and returns their
// iterations and how many lines were skipped.
func iterationsFrom(t *testing.T, h *historyFileReader, from int64) ([]int, int) {
	t.Helper()
	var its []int
	s := h.stream(from)
	for rec := s.record(); rec != nil; rec = s.record() {
		its = append(its, rec.Iteration)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return its, s.skipped
}

// TestHistoryStream: a history read a chunk at a time gives every record in
// order, across chunk boundaries, skipping and counting what is not a
// record: a corrupt line, an over-long one, a torn last one.
func TestHistoryStream(t *testing.T) {
	data := historyOf(2500) // over 1 chunk
	lines := bytes.SplitAfter(data, []byte("\n"))
	var b bytes.Buffer
	for i, l := range lines {
		b.Write(l)
		switch i {
		case 10:
			b.WriteString("not json\n\n")
		case 1200:
			b.WriteString(`{"run":"` + strings.Repeat("x", maxHistoryLine+10) + "\"}\n")
		}
	}
	b.WriteString(`{"run":"x","itera`)
	h, _ := writeHistory(t, b.Bytes())
	its, skipped := iterationsFrom(t, h, 0)
	if len(its) != 2500 || skipped != 3 {
		t.Fatalf("%d records, %d skipped; want 2500, 3", len(its), skipped)
	}
	for i, it := range its {
		if it != i+1 {
			t.Fatalf("record %d is iteration %d", i, it)
		}
	}

	// The last N, found from the end, across the over-long line too.
	for _, n := range []int{1, 2, 1300, 1301, 2499, 2500, 3000} {
		from, err := h.startOfLast(n, nil)
		if err != nil {
			t.Fatal(err)
		}
		its, _ := iterationsFrom(t, h, from)
		if want := min(n, 2500); len(its) != want || its[0] != 2500-want+1 || its[len(its)-1] != 2500 {
			t.Fatalf("last %d: %d records, from iteration %d", n, len(its), its[0])
		}
	}
	// ... of those a test accepts.
	odd := func(rec *iterationRecord) bool { return rec.Iteration%2 == 1 }
	from, err := h.startOfLast(3, odd)
	if err != nil {
		t.Fatal(err)
	}
	if its, _ := iterationsFrom(t, h, from); its[0] != 2495 {
		t.Fatalf("the last 3 odd iterations start at %d; want 2495", its[0])
	}

	// A history without a newline at its end, and an empty one.
	h, _ = writeHistory(t, bytes.TrimSuffix(historyOf(3), []byte("\n")))
	if its, skipped := iterationsFrom(t, h, 0); len(its) != 3 || skipped != 0 {
		t.Fatalf("unended history: %v, %d skipped", its, skipped)
	}
	if from, _ := h.startOfLast(1, nil); from == 0 {
		t.Fatalf("the last record of an unended history starts at 0")
	}
	h, _ = writeHistory(t, nil)
	if its, _ := iterationsFrom(t, h, 0); len(its) != 0 {
		t.Fatalf("empty history: %v", its)
	}
}

// TestHistoryStreamBoundedMemory: reading a history of 100,000 records holds
// about a chunk of it, never the whole (which took about 3.4 times the
// file's size when read whole). Coarse: the live heap, sampled along the
// read after a collection (so that garbage not yet collected, which
// depends on when the collector runs, is not counted), grows by less than
// 12 MiB over a 15 MB history (held whole, its records alone would take
// over 25 MB).
func TestHistoryStreamBoundedMemory(t *testing.T) {
	line := `{"run":"4242-1795546444162582082","iteration":7,"startedAt":"2026-01-01T00:07:00Z","durationMs":41234,"end":"done","ok":true,"costUsd":0.1234,"turns":12}` + "\n"
	_, path := writeHistory(t, bytes.Repeat([]byte(line), 100000))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, uint64(0)
	n := 0
	if _, err := eachRecord(path, func(*iterationRecord) {
		if n++; n%2000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if n != 100000 {
		t.Fatalf("%d records; want 100000", n)
	}
	grown := int64(peak) - int64(base)
	t.Logf("the heap grew by %.1f MiB", float64(grown)/(1<<20))
	if grown > 12<<20 {
		t.Errorf("the heap grew by %d MiB reading a %d MB history", grown>>20, len(line)*100000>>20)
	}
}

// TestHistoryRunStart: the stretch of a run that --last cuts is summed
// back to its first record (addEarlier), across chunks, and no further
// (never into the run before it); streamTo reads up to the cut and no
// further.
func TestHistoryRunStart(t *testing.T) {
	id := []byte("4242-1795546444162582082")
	a := bytes.ReplaceAll(historyOf(50), id, []byte("A"))
	b := historyOf(2500) // over 1 chunk
	c := bytes.ReplaceAll(historyOf(3), id, []byte("C"))
	h, _ := writeHistory(t, append(append(append([]byte(nil), a...), b...), c...))
	earlier := func(h *historyFileReader, from int64, run string, match func(*iterationRecord) bool) int {
		t.Helper()
		s := &runSummary{id: run}
		if err := s.addEarlier(h, from, match); err != nil {
			t.Fatal(err)
		}
		return s.earlier
	}
	from, err := h.startOfLast(5, nil) // C's 3, and b's last 2
	if err != nil {
		t.Fatal(err)
	}
	if n := earlier(h, from, string(id), nil); n != 2498 {
		t.Fatalf("%d records of the run before the cut; want 2498", n)
	}
	var its []int
	s := h.streamTo(int64(len(a)), from)
	for rec := s.record(); rec != nil; rec = s.record() {
		if rec.Run != string(id) {
			t.Fatalf("read %s's iteration %d", rec.Run, rec.Iteration)
		}
		its = append(its, rec.Iteration)
	}
	if s.err != nil || len(its) != 2498 || its[0] != 1 || its[2497] != 2498 {
		t.Fatalf("up to the cut: %d records (%v)", len(its), s.err)
	}
	// Nothing of the run before the cut: the cut is the start.
	for _, cut := range []int64{int64(len(a)), int64(len(a) + len(b))} {
		run := map[int64]string{int64(len(a)): string(id), int64(len(a) + len(b)): "C"}[cut]
		if n := earlier(h, cut, run, nil); n != 0 {
			t.Fatalf("run %s from %d: %d records before it", run, cut, n)
		}
	}
	// A run id again after another run's: its stretch starts after that.
	h2, _ := writeHistory(t, append(append(append([]byte(nil), a...), c...), a...))
	last, err := h2.startOfLast(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := earlier(h2, last, "A", nil); n != 49 {
		t.Fatalf("the second stretch of run A: %d records before its last; want 49", n)
	}
	// Of the records a test accepts: run A's, back over the others.
	onlyA := func(rec *iterationRecord) bool { return rec.Run == "A" }
	if n := earlier(h, int64(len(a)+len(b)), "A", onlyA); n != 50 {
		t.Fatalf("run A, matched alone: %d records; want 50", n)
	}
}

// TestHistoryReaderClose: close closes the history's file (serve opens one
// per request: a leak would grow with every page shown), and a missing
// history, opened as an empty one, closes without a file.
func TestHistoryReaderClose(t *testing.T) {
	h, _ := writeHistory(t, historyOf(1))
	h.close()
	if err := h.f.Close(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("the history's file after close: closing it again gave %v; want %v", err, os.ErrClosed)
	}
	missing, err := openHistoryReader(filepath.Join(t.TempDir(), historyFile))
	if err != nil || missing.f != nil {
		t.Fatalf("a missing history: %+v, %v", missing, err)
	}
	missing.close()
}

// longRecord is a history line of exactly n bytes (without its newline)
// that is a record: iteration it of run L, with a reason that long.
func longRecord(it, n int) []byte {
	head := fmt.Sprintf(`{"run":"L","iteration":%d,"reason":"`, it)
	return []byte(head + strings.Repeat("x", n-len(head)-2) + `"}`)
}

// TestHistoryLongLines: a record of exactly maxHistoryLine bytes is read,
// forward and backward; one a byte longer is skipped and counted, never
// taken as a record, whether the chunk it ends in holds it whole (up to
// maxHistoryLine) or it was already given up (longer than that and a
// chunk); the record after it is read, also when a chunk read backward
// starts at the long line's newline.
func TestHistoryLongLines(t *testing.T) {
	small := []byte(`{"run":"L","iteration":9,"startedAt":"2026-01-01T00:00:00Z"}` + "\n")
	for _, c := range []struct {
		n    int
		want []int
	}{
		{maxHistoryLine, []int{1, 9}},
		{maxHistoryLine + 1, []int{9}},
		{maxHistoryLine + historyChunk, []int{9}}, // given up at a chunk's end
		{maxHistoryLine + historyChunk + 10, []int{9}},
		// read backward, the chunk read last starts at the long line's
		// newline
		{-(maxHistoryLine + 1), []int{9}},
	} {
		after := small
		if c.n < 0 {
			c.n, after = -c.n, append(longRecord(9, historyChunk-2), '\n')
		}
		data := append(append(longRecord(1, c.n), '\n'), after...)
		h, _ := writeHistory(t, data)
		its, skipped := iterationsFrom(t, h, 0)
		if !slices.Equal(its, c.want) || skipped != 2-len(c.want) {
			t.Errorf("a line of %d bytes, read forward: records %v, %d skipped; want %v", c.n, its, skipped, c.want)
		}
		var back []int
		if err := h.eachBefore(h.size, func(rec *iterationRecord, at int64) bool {
			back = append(back, rec.Iteration)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		slices.Reverse(back)
		if !slices.Equal(back, c.want) {
			t.Errorf("a line of %d bytes, read backward: records %v; want %v", c.n, back, c.want)
		}
	}
}

// TestHistoryStreamShrunk: a history cut short while it is read (reset,
// or a history replaced) ends the read with an error, not with the
// records that happen to be left.
func TestHistoryStreamShrunk(t *testing.T) {
	h, path := writeHistory(t, historyOf(2500)) // over 1 chunk
	if err := os.Truncate(path, h.size/2); err != nil {
		t.Fatal(err)
	}
	s := h.stream(0)
	n := 0
	for rec := s.record(); rec != nil; rec = s.record() {
		n++
	}
	if s.err == nil {
		t.Fatalf("a history cut to half its length while read: %d records, no error", n)
	}
}
