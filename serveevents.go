package main

// This file implements serve's event streams: GET /api/runs/{id}/events,
// Server-Sent Events. The rules are:
//
//   - Each stream reads the run's files itself, every servePoll, from where
//     it left off; the run writes them as it always does and never waits on
//     a reader: a hundred streams, or a client that stops reading, cannot
//     slow it.
//   - The run's events go one per data: line, as 'run --events' writes
//     them: the lines of its events file (the last streamBacklog bytes of
//     it first), which every run writes in its state directory
//     (runEventsFile), --events or not. An entry without one — the file
//     was refused (a link or a FIFO in its place), or an older binary
//     registered the run without --events — gets its iteration events,
//     made from the records its history gets, and so does a stream whose
//     events file is removed or replaced during the run (the run stops
//     writing it): the file is read through the one reader, never through
//     a link or from a FIFO (openOwnFile), and the stream goes on from the
//     history after the last iteration the file gave. A named "view" event carries
//     the run as GET /api/runs/{id} shows it, without the history, when it
//     changes; "end" says the run is over, and the stream ends: after every
//     event the run wrote, and a last view, sent whatever was sent before,
//     saying how it ended and its lines up to its end line (tryout 7: a
//     page kept the last live state, and lines short of the end).
//   - Memory is bounded: a stream holds one read of at most streamChunk
//     bytes; a line longer than that is skipped. Each write has
//     streamWriteTimeout: a client that does not read is cut off. At most
//     maxStreams are open at once; more are refused (503).

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"time"
)

// streamWriteTimeout is how long a client may take to take a write (a
// variable for the tests).
var streamWriteTimeout = 10 * time.Second

// Limits of the event streams.
const (
	maxStreams      = 256
	streamKeepAlive = 15 * time.Second
	streamBacklog   = 64 << 10
	streamChunk     = 256 << 10
	// streamViewEvery: a view that changed is sent at most this often.
	streamViewEvery = time.Second
)

// events serves GET /api/runs/{id}/events.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	v := s.find(w, r)
	if v == nil {
		return
	}
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		serveError(w, r, http.StatusServiceUnavailable, "too many event streams open")
		return
	}
	rs := newRunStream(*v)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send([]byte("retry: 2000\n\n")) {
		return
	}
	tick := time.NewTicker(servePoll)
	defer tick.Stop()
	last := time.Now()
	for {
		now := time.Now()
		out, ended := rs.poll(now)
		switch {
		case len(out) > 0:
			if !send(out) {
				return
			}
			last = now
		case now.Sub(last) >= streamKeepAlive:
			if !send([]byte(": keep-alive\n\n")) {
				return
			}
			last = now
		}
		if ended {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// runStream is what one event stream knows of its run.
type runStream struct {
	e    runEntry
	max  int
	tail fileTail
	// fromHistory: the run's entry names no events file, or it was
	// refused; its iteration events are made from its records, after
	// iteration sent (the last the events file gave).
	fromHistory bool
	sent        int
	lastView    []byte
	viewAt      time.Time
	states      *runsReader // the state file, read when it changed
}

// newRunStream follows v's run.
func newRunStream(v runView) *runStream {
	rs := &runStream{e: v.entry, max: v.MaxIterations, tail: fileTail{path: v.entry.Events}, states: newRunsReader()}
	if rs.tail.path == "" {
		rs.toHistory()
	}
	return rs
}

// toHistory makes the stream's iteration events from the run's history
// from now on.
func (rs *runStream) toHistory() {
	rs.fromHistory = true
	rs.tail = fileTail{path: filepath.Join(rs.e.StateDir, historyFile)}
}

// poll returns what is new since the last poll, as SSE frames, and
// whether the run is over (after its last events).
func (rs *runStream) poll(now time.Time) ([]byte, bool) {
	alive := entryAlive(rs.e)
	var b bytes.Buffer
	lines := rs.tail.lines()
	if rs.tail.refused && !rs.fromHistory {
		rs.toHistory()
		lines = append(lines, rs.tail.lines()...)
	}
	for _, line := range lines {
		if rs.fromHistory {
			if line = rs.iterationEvent(line); line == nil {
				continue
			}
		} else if n := iterationOf(line); n > rs.sent {
			rs.sent = n
		}
		b.WriteString("data: ")
		b.Write(line)
		b.WriteString("\n\n")
	}
	if !alive {
		if rs.tail.full {
			return b.Bytes(), false // the rest of its events first, at the next poll
		}
		b.WriteString("event: view\ndata: ")
		b.Write(rs.lastWords(now))
		b.WriteString("\n\nevent: end\ndata: {\"id\":" + string(jsonQuote(rs.e.ID)) + "}\n\n")
		return b.Bytes(), true
	}
	if now.Sub(rs.viewAt) >= streamViewEvery {
		if view := rs.view(now); view != nil {
			b.WriteString("event: view\ndata: ")
			b.Write(view)
			b.WriteString("\n\n")
			rs.viewAt = now
		}
	}
	return b.Bytes(), false
}

// view is the run's view as JSON when it changed since the last one sent
// (its elapsed time aside, which the page counts itself), else nil. The
// state file is read again only when it changed.
func (rs *runStream) view(now time.Time) []byte {
	st := rs.states.state(rs.e.State)
	d := runDetail{runView: viewOf(rs.e, st, now), Lines: linesOf(st, rs.e.PID)}
	rs.max = d.MaxIterations
	elapsed := d.ElapsedMS
	d.ElapsedMS = 0
	same, _ := json.Marshal(d)
	if bytes.Equal(same, rs.lastView) {
		return nil
	}
	rs.lastView = same
	d.ElapsedMS = elapsed
	data, _ := json.Marshal(d)
	return data
}

// lastWords is the view of the run that is over, as JSON, sent whether
// it changed or not (a page may have shown another since): how it ended
// and its lines up to its end line, as its state file says them once the
// run is gone; a run whose state file never said how it ended (killed, or
// it crashed) is said so, as watch says it.
func (rs *runStream) lastWords(now time.Time) []byte {
	st, _ := readRunState(rs.e.State)
	d := runDetail{runView: viewOf(rs.e, st, now), Lines: linesOf(st, rs.e.PID)}
	if st == nil || st.PID != rs.e.PID || !st.Started.Equal(rs.e.Started) || !st.Ended {
		d.State, d.Now, d.Question, d.StopRequested = statusKilled, "ended without saying how: killed, or it crashed", nil, false
	}
	data, _ := json.Marshal(d)
	return data
}

// iterationEvent is the iteration event of the record on line, as the run
// writes it in its events file, or nil for a line that is not one of the
// run's records.
func (rs *runStream) iterationEvent(line []byte) []byte {
	rec := recordOf(line)
	if rec == nil || rec.Run != rs.e.ID || rec.Iteration <= rs.sent {
		return nil
	}
	ev := runEvent{Event: eventIteration, Time: rec.StartedAt.Add(rec.duration()), Workspace: rs.e.Workspace, Run: rs.e.ID,
		MaxIterations: rs.max, Record: rec}
	data, err := json.Marshal(&ev)
	if err != nil {
		return nil
	}
	return data
}

// iterationOf is the iteration number of an iteration event's line of an
// events file, or 0.
func iterationOf(line []byte) int {
	if !bytes.Contains(line, []byte(`"event":"iteration"`)) {
		return 0
	}
	var ev struct {
		Event  string `json:"event"`
		Record *struct {
			Iteration int `json:"iteration"`
		} `json:"record"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Event != eventIteration || ev.Record == nil {
		return 0
	}
	return ev.Record.Iteration
}

// fileTail reads the lines appended to a file, through the one reader,
// opening it at each read: a file replaced or emptied is read again from
// its start; one removed, or replaced by a link, a FIFO or a directory
// (the run stopped writing it), is refused, never followed nor waited on.
type fileTail struct {
	path    string
	off     int64
	started bool
	refused bool // the last open failed
	// full: the last read was streamChunk bytes, and more may follow.
	full bool
	// skip: the read starts inside a line (the backlog's start, or a line
	// over streamChunk), left out up to its end.
	skip bool
}

// lines returns the whole lines appended since the last call (at the
// first, those of the last streamBacklog bytes), streamChunk bytes at most.
func (t *fileTail) lines() [][]byte {
	f, fi, err := openOwnFile(t.path)
	t.refused, t.full = err != nil, false
	if err != nil {
		return nil
	}
	defer f.Close()
	size := fi.Size()
	if !t.started {
		t.started = true
		t.off = max(0, size-streamBacklog)
		t.skip = t.off > 0
	}
	if size < t.off {
		t.off, t.skip = 0, false
	}
	n := min(size-t.off, streamChunk)
	t.full = n == streamChunk
	if n == 0 {
		return nil
	}
	buf := make([]byte, n)
	if m, _ := f.ReadAt(buf, t.off); int64(m) < n {
		return nil
	}
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		if n == streamChunk { // a line longer than a chunk: left out
			t.off += n
			t.skip = true
		}
		return nil
	}
	buf = buf[:end]
	t.off += int64(end) + 1
	if t.skip {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			t.skip = false
			return nil
		}
		buf, t.skip = buf[i+1:], false
	}
	var out [][]byte
	for _, line := range bytes.Split(buf, []byte{'\n'}) {
		// A data: line ends at a newline or a carriage return.
		if len(line) > 0 && bytes.IndexByte(line, '\r') < 0 {
			out = append(out, line)
		}
	}
	return out
}
