package main

// This file reads a workspace's history a piece at a time, so that what a
// command holds in memory does not grow with the history (a long-lived
// workspace has hundreds of thousands of records). The rules are:
//
//   - The file is opened once, through the one reader, and read up to the
//     length it had then: records appended meanwhile by a run are left out,
//     so that the passes of one command see the same records.
//   - Reading forward goes a chunk at a time (historyChunk), its lines
//     parsed in parallel (parseHistory); a line is a record or is skipped
//     and counted, as when the file was read whole. A line longer than
//     maxHistoryLine is skipped and counted without being held, and so is
//     a line running through a hole of the file (NULs it does not store:
//     a sparse 2 GiB history took minutes to read), jumped, never read;
//     their bytes are counted for the warning (longBytes).
//   - The last N records (history --last N) are found from the end of the
//     file, reading backward: what comes before them is never read, but
//     for the rest of the run they begin (its totals), found the same way.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// historyChunk is how much of a history is read and parsed at once.
const historyChunk = 1 << 20

// maxHistoryLine bounds one line of a history: a longer one (an iteration
// that changed hundreds of thousands of files) is skipped.
const maxHistoryLine = 16 << 20

// historyFileReader is a history opened for reading; a missing history is
// an empty one (f is nil).
type historyFileReader struct {
	f    *os.File
	size int64 // the file's length when opened
	// longBytes are the bytes of the lines skipped for their length or a
	// hole, by the stream that passed the most.
	longBytes int64
}

// openHistoryReader opens the history at path for reading.
func openHistoryReader(path string) (*historyFileReader, error) {
	f, fi, err := openOwnFile(path) // a link there is not the tool's history
	if errors.Is(err, os.ErrNotExist) {
		return &historyFileReader{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the history %s: %w", path, unwrapPathError(err))
	}
	return &historyFileReader{f: f, size: fi.Size()}, nil
}

// faultHint prints, after a warning that a run cannot use the file at
// path (shown as shown) for err, the hint fileFaultHint gives, if any.
func (c *console) faultHint(path, shown string, err error) {
	if hint := fileFaultHint(path, shown, err); hint != "" {
		c.errorf("hint: %s", hint)
	}
}

// historyFault says what is wrong with the history at path (shown as
// shown) when something other than a regular file is there (a link, a
// FIFO): what it is, and the command that removes it; nil when it is a
// regular file or missing.
func historyFault(path, shown string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("the history %s is %v: history shows nothing of it and runs write none (%s)",
		shown, notRegularAt(path, fi), fileFaultHint(path, shown, errNotRegular))
}

// close closes the file.
func (h *historyFileReader) close() {
	if h.f != nil {
		h.f.Close()
	}
}

// historyStream reads a history's records forward, a chunk at a time.
type historyStream struct {
	h       *historyFileReader
	pos     int64  // where the next chunk is read
	end     int64  // where the stream ends: the file's length, or a line's start
	buf     []byte // the chunk, reused
	carry   int    // the length of the start of a line the last chunk cut, kept at buf's start
	long    bool   // skipping the rest of an over-long line
	read    *historyRead
	next    int // the index in read of the next record
	skipped int // lines that are not records, so far
	err     error
	// longBytes are the bytes of the lines skipped for their length or a
	// hole, so far.
	longBytes int64
}

// stream reads the records from offset from (the start of a line) to the
// end of the file as opened.
func (h *historyFileReader) stream(from int64) *historyStream {
	return h.streamTo(from, h.size)
}

// streamTo reads the records from offset from to offset end (each the
// start of a line, or the end of the file as opened).
func (h *historyFileReader) streamTo(from, end int64) *historyStream {
	return &historyStream{h: h, pos: from, end: min(end, h.size)}
}

// record returns the next record, or nil at the end (or on an error, in
// s.err).
func (s *historyStream) record() *iterationRecord {
	for s.read == nil || s.next >= len(s.read.records) {
		if !s.fill() {
			return nil
		}
	}
	rec := s.read.records[s.next]
	s.read.records[s.next] = nil // the caller's to keep or drop
	s.next++
	return rec
}

// fill reads and parses the next chunk's whole lines; false at the end.
func (s *historyStream) fill() bool {
	s.read, s.next = nil, 0
	if s.h.f == nil || s.err != nil {
		return false
	}
	if s.pos >= s.end { // the last line, without a newline
		if s.carry == 0 {
			return false
		}
		s.read = s.parse(s.buf[:s.carry])
		s.carry = 0
		return true
	}
	if d := nextData(s.h.f, s.pos, s.end); d > s.pos {
		// A hole: NULs, never a newline. The line it is in is no record.
		if !s.long {
			s.long = true
			s.skipped++
			s.addLong(int64(s.carry))
		}
		s.addLong(d - s.pos)
		s.carry, s.pos = 0, d
		return true // and on from d
	}
	want := s.carry + int(min(historyChunk, s.end-s.pos))
	if cap(s.buf) < want {
		nb := make([]byte, max(want, 2*cap(s.buf)))
		copy(nb, s.buf[:s.carry])
		s.buf = nb
	}
	buf := s.buf[:want]
	n, err := s.h.f.ReadAt(buf[s.carry:], s.pos)
	if n < len(buf)-s.carry && err != nil {
		s.err = fmt.Errorf("reading the history: %w", err)
		return false
	}
	s.pos += int64(n)
	buf, fresh := buf[:s.carry+n], s.carry // the carry holds no newline
	if s.long {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			s.addLong(int64(len(buf)))
			s.carry = 0
			return true // still in it
		}
		s.addLong(int64(i))
		s.long, buf, fresh = false, buf[i+1:], 0
	} else if i := bytes.IndexByte(buf[fresh:], '\n'); i >= 0 && fresh+i > maxHistoryLine {
		s.skipped++ // an over-long line that ends here: not parsed
		s.addLong(int64(fresh + i))
		buf, fresh = buf[fresh+i+1:], 0
	}
	cut := bytes.LastIndexByte(buf[fresh:], '\n') + 1
	if cut > 0 {
		cut += fresh
	}
	s.read = s.parse(buf[:cut])
	s.carry = copy(s.buf, buf[cut:]) // the records hold no bytes of buf
	if s.carry > maxHistoryLine {
		s.addLong(int64(s.carry))
		s.carry, s.long = 0, true
		s.skipped++
	}
	return true
}

// addLong counts n bytes of lines skipped for their length or a hole.
func (s *historyStream) addLong(n int64) {
	s.longBytes += n
	s.h.longBytes = max(s.h.longBytes, s.longBytes)
}

// nextData returns the offset of f's first byte of data at or after off,
// before end: past a hole (NULs the file system does not store), end when
// the rest up to end is one; off when the system cannot tell.
func nextData(f *os.File, off, end int64) int64 {
	if off >= end {
		return off
	}
	d, err := f.Seek(off, seekData) // the offset is unused: reads are ReadAt
	if errors.Is(err, syscall.ENXIO) {
		return end // no data after off
	}
	if err != nil || d < off {
		return off
	}
	return min(d, end)
}

// holeBefore returns the start of the hole of f that ends at end (a run of
// NULs the file system does not store, up to end), or end when the byte
// before end is data or the system cannot tell.
func holeBefore(f *os.File, end int64) int64 {
	if end == 0 || nextData(f, end-1, end) < end {
		return end
	}
	lo := end - 1 // [lo, end) is a hole
	for step := int64(historyChunk); lo > 0; step *= 2 {
		q := max(0, end-step)
		if nextData(f, q, end) >= end {
			lo = q
			continue
		}
		// Data between q and lo: hop over it, and the holes between, to
		// the hole that goes on to end.
		for {
			h, err := f.Seek(q, seekHole)
			if err != nil || h < q || h >= lo {
				return lo
			}
			d := nextData(f, h, end)
			if d >= end {
				return h
			}
			if d <= q {
				return lo
			}
			q = d
		}
	}
	return lo
}

// parse parses lines and counts those skipped.
func (s *historyStream) parse(lines []byte) *historyRead {
	r := parseHistory(lines)
	s.skipped += r.skipped
	return r
}

// eachRecord calls fn for every record of the history at path, in order,
// and returns how many lines were skipped.
func eachRecord(path string, fn func(rec *iterationRecord)) (skipped int, err error) {
	h, err := openHistoryReader(path)
	if err != nil {
		return 0, err
	}
	defer h.close()
	s := h.stream(0)
	for rec := s.record(); rec != nil; rec = s.record() {
		fn(rec)
	}
	return s.skipped, s.err
}

// startOfLast returns the offset of the line of the nth record from the end
// that match accepts (nil: any), or 0 when there are fewer.
func (h *historyFileReader) startOfLast(n int, match func(*iterationRecord) bool) (int64, error) {
	from, found := int64(0), 0
	err := h.eachBefore(h.size, func(rec *iterationRecord, at int64) bool {
		if match == nil || match(rec) {
			if found++; found == n {
				from = at
				return false
			}
		}
		return true
	})
	return from, err
}

// eachBefore calls fn with each record of the lines before offset end (the
// start of a line, or the file's length), the last first, and the offset of
// its line, until fn returns false: it reads the file backward from end, a
// chunk at a time, and parses only the lines it passes.
func (h *historyFileReader) eachBefore(end int64, fn func(rec *iterationRecord, at int64) bool) error {
	return h.eachBeforeBy(end, recordOf, fn)
}

// eachBeforeBy is eachBefore with of parsing each line (recordOf, or
// recordTotalsOf where only a run's totals are read).
func (h *historyFileReader) eachBeforeBy(end int64, of func(line []byte) *iterationRecord, fn func(rec *iterationRecord, at int64) bool) error {
	if h.f == nil {
		return nil
	}
	// data is the file from base up to the lines passed, and ends with the
	// newline of the line before them (or is the file's unended end).
	base, data := min(end, h.size), []byte(nil)
	readBack := func() ([]byte, error) {
		c := min(int64(historyChunk), base)
		buf := make([]byte, c)
		if _, err := h.f.ReadAt(buf, base-c); err != nil {
			return nil, fmt.Errorf("reading the history: %w", err)
		}
		base -= c
		return buf, nil
	}
	for {
		stop := len(data)
		if stop > 0 && data[stop-1] == '\n' {
			stop--
		}
		k := bytes.LastIndexByte(data[:stop], '\n')
		if k < 0 && base > 0 {
			// The line starts before data: read back to the newline before
			// it (nl, the chunk up to it), holding at most maxHistoryLine
			// of the line.
			var pieces [][]byte // of the line, read back: the last first
			var nl []byte
			held, long := stop, false // the line's bytes, without its newline
			for base > 0 && nl == nil {
				if o := holeBefore(h.f, base); o < base {
					// NULs, never a newline: the line is no record.
					long, pieces, base = true, nil, o
					continue
				}
				buf, err := readBack()
				if err != nil {
					return err
				}
				part := buf
				if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
					nl, part = buf[:i+1], buf[i+1:]
				}
				if !long {
					pieces, held = append(pieces, part), held+len(part)
					if long = held > maxHistoryLine; long {
						pieces = nil
					}
				}
			}
			if long { // passed, not held: not a record
				if data = nl; data == nil {
					return nil // it was the first line
				}
				continue
			}
			joined := append([]byte(nil), nl...)
			for i := len(pieces) - 1; i >= 0; i-- {
				joined = append(joined, pieces[i]...)
			}
			data = append(joined, data...)
			continue
		}
		if line := data[k+1 : stop]; len(bytes.TrimSpace(line)) > 0 {
			if rec := of(line); rec != nil && !fn(rec, base+int64(k)+1) {
				return nil
			}
		}
		if k < 0 {
			return nil
		}
		data = data[:k+1]
	}
}
