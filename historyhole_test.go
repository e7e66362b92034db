package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestHistoryHoles: a history with holes (a sparse file) between and after
// its records gives the same records forward and backward as reading it
// would, each line through a hole skipped and its bytes counted, and
// holeBefore finds each hole's start past the data and holes before it.
func TestHistoryHoles(t *testing.T) {
	recs := bytes.SplitAfter(historyOf(3), []byte("\n"))
	path := filepath.Join(t.TempDir(), historyFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const mib = 1 << 20
	// rec 1, a hole, a newline and rec 2, a hole, a newline and rec 3, a hole
	at := []int64{0, 20 * mib, 45 * mib}
	for i, off := range at {
		data := recs[i]
		if i > 0 {
			data = append([]byte("\n"), data...)
		}
		if _, err := f.WriteAt(data, off); err != nil {
			t.Fatal(err)
		}
	}
	size := int64(80 * mib)
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if nextData(f, 10*mib, size) == 10*mib {
		t.Skip("the file system does not report holes")
	}
	h, err := openHistoryReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	its, skipped := iterationsFrom(t, h, 0)
	if !slices.Equal(its, []int{1, 2, 3}) || skipped != 3 {
		t.Errorf("forward: iterations %v, %d skipped; want [1 2 3], 3 skipped", its, skipped)
	}
	if h.longBytes < size-int64(3*mib) || h.longBytes > size {
		t.Errorf("bytes skipped = %d; want about %d", h.longBytes, size)
	}
	var back []int
	var offs []int64
	if err := h.eachBefore(h.size, func(rec *iterationRecord, off int64) bool {
		back, offs = append(back, rec.Iteration), append(offs, off)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if want := []int64{45*mib + 1, 20*mib + 1, 0}; !slices.Equal(back, []int{3, 2, 1}) || !slices.Equal(offs, want) {
		t.Errorf("backward: iterations %v at %v; want [3 2 1] at %v", back, offs, want)
	}
	// holeBefore: the hole ending at the end starts after rec 3's block,
	// the one ending at rec 2 after rec 1's; data before end: end. The
	// start is where the file system says the hole after that data begins.
	for _, c := range []struct{ end, after int64 }{{size, 45 * mib}, {20 * mib, 0}, {45 * mib, 20 * mib}, {45*mib - 5, 20 * mib}, {20*mib + 3*mib, 20 * mib}} {
		want, err := f.Seek(c.after, seekHole)
		if err != nil {
			t.Fatal(err)
		}
		if o := holeBefore(f, c.end); o != want {
			t.Errorf("holeBefore(%d) = %d; want %d, the hole's start after the data at %d", c.end, o, want, c.after)
		}
	}
	if o := holeBefore(f, 20*mib+10); o != 20*mib+10 {
		t.Errorf("holeBefore in data = %d; want %d", o, 20*mib+10)
	}
}
