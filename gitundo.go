package main

// This file takes back a git worktree add that failed or did not answer
// in time, and says how to free a worktree path that is taken. The rules
// are:
//
//   - The path was free and the repository's claude-iterate lock is held
//     (gitLocked) from before the add to after the undo, so whatever is at
//     the path then is the add's: the worktree is removed with
//     `git worktree remove --force --force` (a killed add leaves it locked,
//     "initializing"), or, when git does not know it, its directory is
//     removed; the branch the add made (-b) is deleted only while it still
//     points at the commit it was made from, and never when git says it
//     was there already (made meanwhile by someone else). Nothing else is
//     touched.
//   - The error says what failed and what was taken back, or, when the undo
//     failed too, the command that finishes it.
//   - A taken worktree path is named with the command that frees it: the
//     worktree's own `git worktree remove` (with --force --force when it is
//     locked), or "move it away" for a directory git does not know.

import (
	"os"
	"path/filepath"
	"strings"
)

// undoWorktreeAdd takes back what a failed git worktree add of dir on
// branch made; newBranch: the add was to make the branch, from base. It
// returns what it did, or what the user has to do, for the error.
func (g *gitRepo) undoWorktreeAdd(dir, branch, base string, newBranch bool) string {
	var undone, left []string
	if known, _ := g.worktreeAt(dir); known {
		if _, stderr, err := gitOut(g.top, nil, "worktree", "remove", "--force", "--force", dir); err != nil {
			left = append(left, "remove the worktree with 'git worktree remove --force --force "+dir+"' ("+gitFailure(stderr, err)+")")
		} else {
			undone = append(undone, "the worktree")
		}
	}
	if _, err := os.Lstat(dir); err == nil {
		if err := os.RemoveAll(dir); err != nil {
			left = append(left, "remove "+dir+" ("+unwrapPathError(err).Error()+")")
		} else if len(undone) == 0 {
			undone = append(undone, "its directory")
		}
	}
	gitOut(g.top, nil, "worktree", "prune")
	if newBranch && base != "" && g.branchExists(branch) {
		// update-ref with the old value: only the branch as the add made it.
		if _, stderr, err := gitOut(g.top, nil, "update-ref", "-d", "refs/heads/"+branch, base); err != nil {
			left = append(left, "delete the branch with 'git branch -D "+branch+"' ("+gitFailure(stderr, err)+")")
		} else {
			undone = append(undone, "the branch "+branch)
		}
	}
	switch {
	case len(left) > 0:
		return "to finish undoing it: " + strings.Join(left, "; ")
	case len(undone) > 0:
		return "undone: " + strings.Join(undone, " and ") + " removed"
	}
	return "it left nothing behind"
}

// worktreeAt reports whether git knows a worktree at dir, and whether it
// is locked.
func (g *gitRepo) worktreeAt(dir string) (known, locked bool) {
	out, _, err := gitOut(g.top, nil, "worktree", "list", "--porcelain")
	if err != nil {
		return false, false
	}
	want := filepath.Clean(dir)
	if r, err := filepath.EvalSymlinks(filepath.Dir(want)); err == nil {
		want = filepath.Join(r, filepath.Base(want))
	}
	for _, block := range strings.Split(out, "\n\n") {
		lines := strings.Split(block, "\n")
		p, ok := strings.CutPrefix(lines[0], "worktree ")
		if !ok || (filepath.Clean(p) != want && !sameDir(p, dir)) {
			continue
		}
		for _, l := range lines[1:] {
			if l == "locked" || strings.HasPrefix(l, "locked ") {
				locked = true
			}
		}
		return true, locked
	}
	return false, false
}

// freeHint is how to free the taken worktree path dir.
func (g *gitRepo) freeHint(dir string) string {
	switch known, locked := g.worktreeAt(dir); {
	case known && locked:
		return "it is a locked worktree (a git worktree add that did not finish leaves one): remove it with 'git worktree remove --force --force " + dir + "'"
	case known:
		return "remove it with 'git worktree remove " + dir + "' (it refuses while the worktree has changes: commit them first, or add --force to drop them)"
	}
	return "move it away"
}
