package main

// This file implements what a run does when its console cannot be written
// (a full disk, a pager that quit, a closed pipe): it goes on, as the log
// has everything, but says so once per stream: on stderr when stdout is
// lost, and in the log for either.

import (
	"bufio"
	"io"
	"sync"
	"sync/atomic"
)

// lossWatch is one of the console's streams as written: the first write
// that fails is told to the console (lost).
type lossWatch struct {
	w      io.Writer
	c      *console
	toErr  bool
	failed atomic.Bool
}

func (l *lossWatch) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	if err != nil && l.failed.CompareAndSwap(false, true) {
		l.c.noteLost(l.toErr, err)
	}
	return n, err
}

// lossState is the streams found lost, and who is told of them (onLost);
// errw is the console's stderr as written.
type lossState struct {
	errw   io.Writer
	mu     sync.Mutex
	found  []lostStream
	report func(toErr bool, err error)
}

// lostStream is a stream found lost: stderr with toErr, or stdout.
type lostStream struct {
	toErr bool
	err   error
}

// watchLoss has the console's streams watched: its stdout buffer writes
// to dest, and its stderr lines to err, through lossWatch.
func (c *console) watchLoss() {
	c.out = bufio.NewWriterSize(&lossWatch{w: c.dest, c: c}, 64<<10)
	c.lost.errw = &lossWatch{w: c.err, c: c, toErr: true}
}

// noteLost tells the reporter a stream is lost, or keeps it for the
// reporter to come (onLost). It may run with c.mu held: the reporter must
// not take the console (say is fine).
func (c *console) noteLost(toErr bool, err error) {
	c.lost.mu.Lock()
	defer c.lost.mu.Unlock()
	if c.lost.report == nil {
		c.lost.found = append(c.lost.found, lostStream{toErr, err})
		return
	}
	c.lost.report(toErr, err)
}

// onLost has f told of every stream lost, those lost so far first.
func (c *console) onLost(f func(toErr bool, err error)) {
	c.lost.mu.Lock()
	defer c.lost.mu.Unlock()
	c.lost.report = f
	for _, l := range c.lost.found {
		f(l.toErr, l.err)
	}
	c.lost.found = nil
}

// reportLostConsole has a run (or verify) say when its console con is lost: a warning
// on stderr when stdout is lost, naming the log (or saying there is none),
// and a note in the log for either stream.
func reportLostConsole(con *console, log *runLog) {
	con.onLost(func(toErr bool, err error) {
		err = unwrapPathError(err)
		what := "output"
		if toErr {
			what = "error output"
		}
		log.printf("[the console's %s is lost (%v): what follows is in this log only]", what, err)
		if toErr {
			return // nothing to say it on
		}
		if log == nil {
			con.errorf("warning: the console's output is lost (%v), and there is no log", err)
			return
		}
		con.errorf("warning: the console's output is lost (%v); the log has it: %s", err, log.path0)
	})
}

// errWriter is the console's stderr as written: watched when the console
// was made by newConsole.
func (c *console) errWriter() io.Writer {
	if c.lost.errw == nil {
		return c.err
	}
	return c.lost.errw
}
