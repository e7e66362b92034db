package main

// This file keeps a run's ending truthful. The rules are: a run that ends
// on max iterations right after a failed iteration failed (exit 1) — a
// script must be able to tell a run whose every iteration failed from a
// success; a failure ending names the last iteration's error, so that even
// -q shows the cause. (The money an iteration cost counts in the run's and
// the workspace's totals whatever became of the iteration, interrupted or
// retried after a usage limit: workTotals.add.) A device found full —
// a write of the run refused for want of room (ENOSPC, EDQUOT), or fewer
// than diskFullBelow bytes or no inode left — ends the run with an error
// that says so, after the iteration under way, over an ending that would
// hide it (max iterations, a stop; a completion stays one, and says it):
// its state could not be kept, and no iteration can work. The run's last
// writes take the log's reserve (logfile.go), so that its metadata and log
// say how it ended.

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// ending is how a run ends.
type ending struct {
	code   int
	reason string
	status string
	hint   string
	// signal is the signal that ended the run, if one did.
	signal os.Signal
	// gone is set when the workspace was deleted during the run
	// (workspaceGone): the ending says so, and no save warns of it again.
	gone bool
}

// truthfulEnding adjusts the ending that the met condition gives, after an
// iteration that failed (why) or not.
func truthfulEnding(end ending, met *groupedCondition, failed bool, why string) ending {
	if !failed {
		return end
	}
	if end.code == exitOK && met != nil && met.c.Type == condMaxIterations {
		end.code, end.status = exitError, statusFailed
		end.reason = "failed: " + strings.TrimPrefix(end.reason, "stopped: ") + ", and the last iteration failed: " + clip(why, 300)
		return end
	}
	if end.code == exitError && why != "" && !strings.Contains(end.reason, why) {
		end.reason += fmt.Sprintf(" (last error: %s)", clip(why, 300))
	}
	return end
}

// diskFullBelow is the free room under which a device is full.
const diskFullBelow = 64 << 10

// isNoSpace reports whether err is a write refused for want of room.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// diskCheck tells when the device of a run's state is full: a write of
// the run that found no room (the history's, the log's, a save of the
// metadata), or too little room or no inode left on it.
type diskCheck struct {
	ws      *workspace
	root    string
	log     *runLog
	history *historyWriter
	saveErr error  // a save of the metadata that found its device full
	warned  string // the last save's failure warned of
}

// saveFailed warns of a save of the metadata during the run that failed,
// and keeps the first that found the device full.
func (d *diskCheck) saveFailed(con *console, err error) {
	d.warnSave(con, d.ws.metadataPath(), err)
	if isNoSpace(err) && d.saveErr == nil && d.ws != nil {
		d.saveErr = &os.PathError{Op: "write", Path: d.ws.metadataPath(), Err: unwrapPathError(err)}
	}
}

// warnSave warns of a save of the metadata that failed, but not of the
// same failure twice in a row: each save of a run meets a FIFO left there.
func (d *diskCheck) warnSave(con *console, path string, err error) {
	msg := fmt.Sprintf("warning: saving %s: %v", path, unwrapPathError(err))
	if msg != d.warned {
		d.warned = msg
		con.errorf("%s", msg)
	}
}

// orFull returns end, or the ending of a full device instead when the
// workspace's is: a signal's ending and an error are kept as they are, and
// a completion too (the task is done), saying that the disk is full.
func (d *diskCheck) orFull(end *ending) *ending {
	if end != nil && (end.signal != nil || end.code != exitOK) {
		return end
	}
	why := d.full()
	if why == "" {
		return end
	}
	if end != nil && end.status == statusCompleted {
		done := *end
		done.reason += " (and the disk is full: " + why + ")"
		return &done
	}
	full := &ending{code: exitError, status: statusFailed, reason: "error: the disk is full: " + why,
		hint: fmt.Sprintf("free some room on the device of %s, then run again", relPath(d.root, d.ws.StateDir))}
	if end != nil {
		full.reason += " (the run was ending: " + end.reason + ")"
	}
	return full
}

// full says why the device is full, or "".
func (d *diskCheck) full() string {
	if d.ws == nil {
		return ""
	}
	dir := relPath(d.root, d.ws.StateDir)
	noInode := false
	if n, ok := freeInodes(d.ws.StateDir); ok && n == 0 {
		noInode = true
	}
	for _, err := range []error{d.history.noSpaceErr(), d.log.noSpaceErr(), d.saveErr} {
		var pe *os.PathError
		if errors.As(err, &pe) {
			if noInode {
				return fmt.Sprintf("writing %s: %v (no inode left)", relPath(d.root, pe.Path), pe.Err)
			}
			return fmt.Sprintf("writing %s: %v", relPath(d.root, pe.Path), pe.Err)
		}
	}
	if noInode {
		return fmt.Sprintf("no inode left on the device of %s: no file can be made", dir)
	}
	if free, ok := freeSpace(d.ws.StateDir); ok && free < diskFullBelow {
		return fmt.Sprintf("%d KiB left on the device of %s", free>>10, dir)
	}
	return ""
}

// roundDuration rounds d as durations are shown: to the second past a
// minute, to a tenth past a second, else to the millisecond.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d > time.Minute:
		return d.Round(time.Second)
	case d > time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
