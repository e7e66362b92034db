package main

// This file reads what list, status and history show of a workspace's git
// work: its branch, the commits ahead of and behind its base, the
// uncommitted changes in its worktree, and whether it is merged. The rules
// are: nothing is written (git runs without optional locks); a workspace
// without a worktree shows nothing; a git that fails is said in the view,
// never a guess.

import (
	"fmt"
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
	Removed bool `json:"worktreeRemoved,omitempty"`
	// Broken: the path is no longer the worktree (a link, a .git that is
	// not its own; Error says which and how to repair it); nothing is read
	// there (gitworktreecheck.go).
	Broken bool `json:"worktreeBroken,omitempty"`
	// OnBranch: the worktree is on this branch, not on Branch ("HEAD":
	// detached); the branch is then never said merged.
	OnBranch string `json:"worktreeBranch,omitempty"`
	Error    string `json:"error,omitempty"`
}

// viewGit reads w's git work; nil for a workspace without a worktree.
func viewGit(env *cliEnv, w *workspace) *gitView {
	st := w.meta.Git
	if st == nil || st.Worktree == "" {
		return nil
	}
	v := &gitView{Branch: st.Branch, Worktree: st.Worktree, Base: firstNonEmpty(st.Base, shortSHA(st.BaseCommit))}
	dir := st.Worktree
	common, stderr, err := gitOut(env.projectRoot, nil, "rev-parse", "--git-common-dir")
	if err != nil {
		v.Error = fmt.Sprintf("git rev-parse failed in %s: %s", env.projectRoot, gitFailure(stderr, err))
		return v
	}
	switch f := checkWorktree(joinIfRelative(env.projectRoot, common), env.projectRoot, w.Name, st); {
	case f == nil:
	case f.missing:
		v.WorktreeMissing, v.Removed, dir = true, st.Removed, w.Dir
	case f.broken: // git there would read the main checkout
		v.Broken, v.Error = true, f.Error()
		return v
	default:
		v.OnBranch = f.on
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
	v.Merged = v.Ahead == 0 && v.OnBranch == ""
	if !v.Merged && v.OnBranch == "" && st.Squashed != "" {
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
	if v.OnBranch != "" {
		on := "branch " + v.OnBranch
		if v.OnBranch == "HEAD" {
			on = "a detached HEAD"
		}
		s += fmt.Sprintf("; its worktree %s is on %s, not on %s (git -C %s switch %s)", relPath(root, v.Worktree), on, v.Branch, relPath(root, v.Worktree), v.Branch)
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
	switch {
	case v.Broken:
		return v.Branch + " (worktree broken)"
	case v.Error != "":
		return v.Branch + " (git failed)"
	case v.OnBranch == "HEAD":
		return v.Branch + " (worktree on a detached HEAD)" // as status and merge say it
	case v.OnBranch != "":
		return fmt.Sprintf("%s (worktree on %s)", v.Branch, v.OnBranch)
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
