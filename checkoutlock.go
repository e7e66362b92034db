package main

// This file keeps a run that commits in a checkout alone in it. Such a run
// (--commit without a worktree) commits the changes the checkout shows at
// the end of an iteration as its agent's: another run's agent's edits made
// there meanwhile would go into its commits, and its own be left out of the
// other's. The rules are:
//
//   - Every run but a dry run whose agent works in a git work tree holds
//     that checkout's lock for the whole run: exclusive for a run that
//     commits there (--commit on the checkout; a worktree's run in its
//     own worktree, which no other run shares), shared for any other.
//   - The lock is taken without waiting: a run that finds it held refuses
//     to start, in one line naming the live run (the registry's entries
//     say their checkout, registry.go) and a hint to use --worktree, with
//     which each run works and commits in a checkout of its own. Runs in
//     their own worktrees run side by side, as do runs that do not commit.
//   - The lock is an flock on a file of the repository's common git
//     directory named after the checkout's real path
//     (.git/claude-iterate-checkout-<hash>.lock, which git ignores): every
//     run in the checkout sees it, whatever its user or state directory
//     (the registry is per user: a run with another XDG_STATE_HOME, or
//     under sudo, was not seen), and nothing is written in the work tree.
//     Where that directory cannot be read (a .git git cannot use either),
//     the registry directory holds it (per user, then). The kernel lets the lock go with
//     the process, kill -9 too, so a dead run never keeps another out.
//   - A lock that cannot be taken for another reason (no state directory,
//     a file in the way) is a warning, as for the registry: the run goes
//     on unguarded.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
)

// checkoutHold is a run's hold on its checkout's lock.
type checkoutHold struct {
	fd      int
	top     string // the checkout's top, its real path
	commits bool   // held exclusive: the run commits there
}

// release lets the lock go; a nil hold, or a second call, does nothing.
func (h *checkoutHold) release() {
	if h != nil && h.fd >= 0 {
		syscall.Close(h.fd)
		h.fd = -1
	}
}

// setupGitWork readies r's worktree and commits (setupGit), then
// takes the lock of the checkout its agent works in, but for a dry run.
func setupGitWork(r *runner) error {
	var err error
	if r.gitSetup, err = setupGit(r.env, r.cfg, r.opts, r.ws, r.con); err != nil || r.opts.dryRun {
		return err
	}
	warn := func(msg string) { r.con.errorf("warning: %s", msg) }
	r.lock.checkout, err = holdCheckout(r.workRoot(), r.gitSetup != nil && r.gitSetup.commit, r.ws.Ralph, warn)
	return err
}

// holdCheckout takes the lock of the checkout holding dir (exclusive when
// commits is set), for a run. It returns nil without error outside a work
// tree; an error when another run holds the lock; warn says why it could
// not be taken otherwise; ralph says the run is a ralph-mode one (its
// hint cannot be --worktree, which needs a workspace).
func holdCheckout(dir string, commits, ralph bool, warn func(string)) (*checkoutHold, error) {
	top, dotGit := findDotGit(dir)
	if top == "" {
		return nil, nil
	}
	at := gitCommonDirOf(dotGit)
	base := false // at is the registry's directory
	if at == "" {
		at, base = registryDir(), true
	}
	if at == "" {
		return nil, nil
	}
	sum := sha256.Sum256([]byte(top))
	path := filepath.Join(at, "claude-iterate-checkout-"+hex.EncodeToString(sum[:8])+".lock")
	fail := func(err error) (*checkoutHold, error) {
		warn(fmt.Sprintf("cannot lock the checkout %s against other runs: %v (a run that commits there would take their edits as its agent's)", top, unwrapPathError(err)))
		return nil, nil
	}
	if b, _ := stateBase(); base && b.usable() != nil {
		return fail(b.usable())
	}
	if err := makeDirAll(at, 0o700); err != nil {
		return fail(err)
	}
	// Readable by all: a lock is taken on a read-only descriptor, and a
	// run of another user in the same checkout must see it.
	fd, err := openLockTarget(path, 0o644, true)
	if err != nil {
		return fail(err)
	}
	how := syscall.LOCK_SH
	if commits {
		how = syscall.LOCK_EX
	}
	if err := flockFD(fd, how|syscall.LOCK_NB); err != nil {
		syscall.Close(fd)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, checkoutBusy(top, commits, ralph)
		}
		return fail(err)
	}
	return &checkoutHold{fd: fd, top: top, commits: commits}, nil
}

// checkoutBusy says that another run holds the lock of the checkout top,
// naming it when the registry does, and how to run anyway: a ralph-mode
// run (ralph) cannot take --worktree, which needs a workspace.
func checkoutBusy(top string, commits, ralph bool) error {
	other, otherCommits := "another run", !commits
	entries, _ := liveEntries(nil)
	var found *runEntry
	for i, e := range entries {
		// A run that shares the lock is kept out only by one that
		// commits: another entry (a run of another user holds the lock,
		// unseen here) is not the one in the way.
		if e.Checkout == top && (commits || e.Commits) && (found == nil || e.Commits && !found.Commits) {
			found = &entries[i]
		}
	}
	if found != nil {
		other, otherCommits = fmt.Sprintf("the run of %s (pid %d)", found.Workspace, found.PID), found.Commits
	}
	hintOther, hintThis := "run this one with --worktree (a checkout of its own), or once that run has ended",
		"run with --worktree (each run then commits in a checkout of its own), or once that run has ended"
	if ralph {
		hintOther = "run this once that run has ended, or make a workspace of the task ('claude-iterate init <name> --instructions <file>') and run it with --worktree (a checkout of its own)"
		hintThis = hintOther
	}
	if otherCommits {
		return withHint(fmt.Errorf("%s commits in %s without a worktree, taking every change there as its agent's: this run's edits would go into its commits", other, top), "%s", hintOther)
	}
	return withHint(fmt.Errorf("%s works in %s, and this run would commit there without a worktree, taking that run's edits as its agent's", other, top), "%s", hintThis)
}
