package main

// This file keeps a workspace's history: its iteration records, one JSON
// object a line, in history.jsonl in the workspace's state directory. The
// rules are:
//
//   - A run opens the file once, for appending, without following a link
//     and without blocking (a FIFO put there is refused, never waited on),
//     and writes each record with one write, as it is made.
//   - Reading goes through the safe reader, a piece at a time, in bounded
//     memory (historyscan.go); a line that is not a record (a torn last
//     line after a crash, a corrupt line) is skipped and counted, never
//     fatal; a file that is not a regular file is an error naming the file.
//   - reset removes the file; clean archives it with the workspace.
//   - A history that cannot be written disables itself with one warning:
//     the run goes on. A device found full keeps the records not written
//     (a torn one is written again whole, on a line of its own) and the
//     error (noSpaceErr), on which the run ends; its end writes them once
//     its reserve is freed (close).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// historyFile is the history's name in a workspace's state directory.
const historyFile = "history.jsonl"

// historyWriter appends records to a history. A nil *historyWriter writes
// nothing.
type historyWriter struct {
	f    *os.File
	path string
	at   heldPath
	warn func(msg string)
	// pending are the records a full device refused, in order; torn says
	// that the first was partly written; noSpace is the first refusal.
	pending [][]byte
	torn    bool
	noSpace error
}

// maxPending bounds the records kept for a device that stays full.
const maxPending = 64

// openHistory opens a workspace's history for appending.
func openHistory(path string, warn func(msg string)) (*historyWriter, error) {
	f, err := openFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &historyWriter{f: f, path: path, at: newHeldPath(path, filepath.Dir(path)), warn: warn}, nil
}

// append writes rec as one line.
func (h *historyWriter) append(rec *iterationRecord) {
	if h == nil || h.f == nil {
		return
	}
	if !h.stillThere() {
		return
	}
	data, err := json.Marshal(rec)
	if err == nil {
		if len(h.pending) < maxPending {
			h.pending = append(h.pending, append(data, '\n'))
		}
		err = h.writePending()
	}
	if err != nil && isNoSpace(err) {
		if h.noSpace == nil {
			h.noSpace = &os.PathError{Op: "write", Path: h.path, Err: unwrapPathError(err)}
			h.warn(fmt.Sprintf("writing %s: %v; its records are kept for the run's end", h.path, unwrapPathError(err)))
		}
		return
	}
	if err != nil {
		h.warn(fmt.Sprintf("writing %s: %v; the history of this run is incomplete", h.path, unwrapPathError(err)))
		h.pending = nil
		h.close()
	}
}

// writePending writes the pending records, in order, each with one write.
func (h *historyWriter) writePending() error {
	for len(h.pending) > 0 {
		line := h.pending[0]
		if h.torn {
			line = append([]byte{'\n'}, line...)
		}
		n, err := h.f.Write(line)
		if err != nil {
			h.torn = h.torn || n > 0
			return err
		}
		h.pending, h.torn = h.pending[1:], false
	}
	return nil
}

// noSpaceErr is the first write that found the history's device full, or
// nil.
func (h *historyWriter) noSpaceErr() error {
	if h == nil {
		return nil
	}
	return h.noSpace
}

// stillThere makes sure the history's file is still the one at its path
// (heldfile.go): an agent may remove or replace it during the run, and the
// records would go on into a file nobody can read. Such a file is created
// anew when its name is free (createHeld: never appended to another file
// put there), with a warning; a workspace deleted whole is the run's to report.
func (h *historyWriter) stillThere() bool {
	if !h.at.moved(h.f) {
		return true
	}
	h.f.Close()
	h.f = nil
	f, msg := reopenHeld(h.path, func() (*os.File, error) { return createHeld(h.path) }, "the next records go to the new file", "the history of this run is incomplete")
	if msg != "" {
		h.warn(msg)
	}
	h.f = f
	return f != nil
}

func (h *historyWriter) close() {
	if h == nil || h.f == nil {
		return
	}
	if len(h.pending) > 0 {
		if err := h.writePending(); err != nil {
			h.warn(fmt.Sprintf("writing %s: %v; the history of this run is incomplete (%s not written)", h.path, unwrapPathError(err), plural(len(h.pending), "record")))
		}
	}
	h.f.Close()
	h.f = nil
}

// historyRead is a piece of a history as read: its records, and how many
// lines were skipped as not records.
type historyRead struct {
	records []*iterationRecord
	skipped int
}

// parseHistory parses lines of a history, in parallel over the CPUs for a
// long piece.
func parseHistory(data []byte) *historyRead {
	parts := 1
	if len(data) > 1<<20 {
		parts = runtime.GOMAXPROCS(0)
	}
	chunks := make([][]byte, 0, parts)
	for i := parts; i > 1; i-- {
		cut := len(data) / i
		if j := bytes.IndexByte(data[cut:], '\n'); j >= 0 {
			chunks = append(chunks, data[:cut+j+1])
			data = data[cut+j+1:]
		}
	}
	chunks = append(chunks, data)
	reads := make([]*historyRead, len(chunks))
	var wg sync.WaitGroup
	for i, c := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reads[i] = parseHistoryLines(c)
		}()
	}
	wg.Wait()
	h := reads[0]
	for _, r := range reads[1:] {
		h.records = append(h.records, r.records...)
		h.skipped += r.skipped
	}
	return h
}

// parseHistoryLines parses lines of a history, in order.
func parseHistoryLines(data []byte) *historyRead {
	h := &historyRead{}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec := recordOf(line)
		if rec == nil {
			h.skipped++
			continue
		}
		h.records = append(h.records, rec)
	}
	return h
}

// recordOf parses one line of a history: nil when it is not a record.
func recordOf(line []byte) *iterationRecord {
	rec := &iterationRecord{}
	if json.Unmarshal(line, rec) != nil || rec.Run == "" || rec.Iteration < 1 {
		return nil
	}
	return rec
}

// recordTotals are the fields of a record that a run's totals and header
// read (runSummary.count): history --last reads the run's records before
// those it shows for them alone.
type recordTotals struct {
	Run           string    `json:"run"`
	Iteration     int       `json:"iteration"`
	StartedAt     time.Time `json:"startedAt"`
	DurationMS    int64     `json:"durationMs"`
	Agent         string    `json:"agent"`
	End           string    `json:"end"`
	OK            bool      `json:"ok"`
	CostUSD       float64   `json:"costUsd"`
	CostEstimated bool      `json:"costEstimated"`
	Turns         int       `json:"turns"`
}

// recordTotalsOf parses one line of a history as recordOf does, but only
// the fields of recordTotals: the rest (tools, files, progress, reason…)
// is scanned, never decoded into maps and strings. Nil when it is not a
// record (a line whose other fields have the wrong types, which recordOf
// skips, counts here: only a hand-edited history has one).
func recordTotalsOf(line []byte) *iterationRecord {
	rec, ok := recordTotalsFast(line)
	if !ok {
		var t recordTotals
		if json.Unmarshal(line, &t) != nil {
			return nil
		}
		rec = &iterationRecord{Run: t.Run, Iteration: t.Iteration, StartedAt: t.StartedAt, DurationMS: t.DurationMS,
			Agent: t.Agent, End: t.End, OK: t.OK, CostUSD: t.CostUSD, CostEstimated: t.CostEstimated, Turns: t.Turns}
	}
	if rec.Run == "" || rec.Iteration < 1 {
		return nil
	}
	return rec
}

// recordTotalsKeys are the keys of recordTotals.
var recordTotalsKeys = []string{"run", "iteration", "startedAt", "durationMs", "agent", "end", "ok", "costUsd", "costEstimated", "turns"}

// recordTotalsFast reads recordTotals' fields of line with the validating
// scanner of the stream's fast path (jsonscan.go), the rest walked, not
// decoded; ok false when it gives up (a key twice or in another case, a
// value of the wrong type, anything it does not accept as encoding/json
// does): recordTotalsOf then asks encoding/json.
func recordTotalsFast(line []byte) (*iterationRecord, bool) {
	s := &jsonScanner{data: line}
	isNull, ok := s.objectStart()
	if !ok || isNull {
		return nil, false
	}
	rec := &iterationRecord{}
	started := ""
	good := s.fields(false, recordTotalsKeys, func(k string) bool {
		switch k {
		case "run":
			return s.strValue(&rec.Run)
		case "iteration":
			return s.intField(&rec.Iteration)
		case "startedAt":
			return s.strValue(&started) && started != ""
		case "durationMs":
			return s.intValue(&rec.DurationMS, 64)
		case "agent":
			return s.strValue(&rec.Agent)
		case "end":
			return s.strValue(&rec.End)
		case "ok":
			return s.boolValue(&rec.OK)
		case "costUsd":
			return s.floatValue(&rec.CostUSD)
		case "costEstimated":
			return s.boolValue(&rec.CostEstimated)
		case "turns":
			return s.intField(&rec.Turns)
		}
		s.skip()
		return true
	})
	if !good || s.bad || !s.end() || (started != "" && rec.StartedAt.UnmarshalText([]byte(started)) != nil) {
		return nil, false
	}
	return rec, true
}
