package main

// This file reads what list, status and history show of a workspace's git
// work: its branch, the commits ahead of and behind its base, the
// uncommitted changes in its worktree, and whether it is merged. The rules
// are: nothing is written (git runs without optional locks); a workspace
// without a worktree shows nothing; a git that fails is said in the view,
// never a guess.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// gitView is a workspace's git work, as status --json shows it.
type gitView struct {
	Branch   string `json:"branch"`
	Worktree string `json:"worktree,omitempty"`
	Base     string `json:"base,omitempty"`
	// Ahead: the branch's commits its base lacks; Behind: the base's the
	// branch lacks.
	Ahead  int `json:"ahead"`
	Behind int `json:"behind"`
	// Uncommitted is the number of files changed in the worktree and not
	// committed (a run in progress, or one that was killed).
	Uncommitted int  `json:"uncommitted"`
	Merged      bool `json:"merged"`
	// WorktreeMissing: the worktree was deleted by hand (the next run
	// prunes it and makes it again).
	WorktreeMissing bool `json:"worktreeMissing,omitempty"`
	// Removed: clean removed it (a restored workspace).
	Removed bool   `json:"worktreeRemoved,omitempty"`
	Error   string `json:"error,omitempty"`
}

// viewGit reads w's git work; nil for a workspace without a worktree.
func viewGit(w *workspace) *gitView {
	st := w.meta.Git
	if st == nil || st.Worktree == "" {
		return nil
	}
	v := &gitView{Branch: st.Branch, Worktree: st.Worktree, Base: firstNonEmpty(st.Base, shortSHA(st.BaseCommit))}
	dir := st.Worktree
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		v.WorktreeMissing, v.Removed, dir = true, st.Removed, w.Dir
	}
	base := firstNonEmpty(st.Base, st.BaseCommit)
	out, err := runGit(dir, "rev-list", "--left-right", "--count", base+"..."+"refs/heads/"+st.Branch, "--")
	if err != nil {
		v.Error = fmt.Sprintf("git rev-list %s...%s failed: %v", base, st.Branch, err)
		return v
	}
	if f := strings.Fields(string(out)); len(f) == 2 {
		v.Behind, _ = strconv.Atoi(f[0])
		v.Ahead, _ = strconv.Atoi(f[1])
	}
	v.Merged = v.Ahead == 0
	if !v.Merged && st.Squashed != "" {
		tip, err := runGit(dir, "rev-parse", "refs/heads/"+st.Branch)
		v.Merged = err == nil && strings.TrimSpace(string(tip)) == st.Squashed
	}
	if !v.WorktreeMissing {
		if err := excludeHazard(dir); err != nil { // git status would hang (gitexclude.go)
			v.Error = err.Error()
			return v
		}
		out, err := runGit(dir, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames")
		if err != nil {
			v.Error = fmt.Sprintf("git status failed in %s: %v", dir, err)
			return v
		}
		for _, e := range strings.Split(string(out), "\x00") {
			if e != "" {
				v.Uncommitted++
			}
		}
	}
	return v
}

// text is the view in one line.
func (v *gitView) text(root string) string {
	if v.Error != "" {
		return fmt.Sprintf("branch %s: %s", v.Branch, v.Error)
	}
	s := fmt.Sprintf("branch %s, %s ahead of %s, %d behind", v.Branch, plural(v.Ahead, "commit"), v.Base, v.Behind)
	switch {
	case v.WorktreeMissing && v.Removed:
		s += fmt.Sprintf("; its worktree %s was removed by clean (the next run makes it again)", relPath(root, v.Worktree))
	case v.WorktreeMissing:
		s += fmt.Sprintf("; its worktree %s is gone (the next run makes it again)", relPath(root, v.Worktree))
	case v.Uncommitted > 0:
		s += fmt.Sprintf("; %s uncommitted in %s", plural(v.Uncommitted, "file"), relPath(root, v.Worktree))
	}
	if v.Merged {
		s += "; merged"
	} else {
		s += "; not merged"
	}
	return s
}

// short is the view for list's BRANCH column.
func (v *gitView) short() string {
	if v.Error != "" {
		return v.Branch + " (git failed)"
	}
	s := fmt.Sprintf("%s +%d -%d", v.Branch, v.Ahead, v.Behind)
	if v.Uncommitted > 0 {
		s += fmt.Sprintf(" ~%d", v.Uncommitted)
	}
	if v.Merged {
		s += " merged"
	}
	return s
}
