package main

// This file implements the merge command: a workspace's branch brought into
// the branch its worktree was made from. The rules are:
//
//   - A fast-forward when it can, else a merge commit; --squash makes one
//     commit of the branch's work.
//   - The merge happens in the checkout that has the target branch checked
//     out (normally the project's own). When none has it, a fast-forward
//     moves the branch; anything else is refused.
//   - It refuses while a run of the workspace goes on, and when the target
//     checkout has uncommitted changes to tracked files. Untracked files are
//     no reason, unless the merge would overwrite them (git refuses that
//     before it changes anything, and the files are named).
//   - A conflict leaves nothing half-done: it is found before the merge
//     (git merge-tree, which writes no checkout), or, with a git too old for
//     that, the merge is aborted; the target is as it was, the branch
//     intact; the conflicting files are named, exit 1.

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// mergeUsage is the manual of the merge command.
const mergeUsage = `Usage: claude-iterate merge <workspace> [--squash]

Brings the branch of a workspace that runs in a git worktree (run
--worktree) into the branch the worktree was made from: a fast-forward when
it can, else a merge commit. The merge happens in the checkout that has
that branch checked out (normally the project's); when none has it, a
fast-forward moves the branch, anything else is refused.

It refuses while a run of the workspace is going on, when its worktree is
no longer its own (a link, a broken .git) or is on another branch, and
when the target checkout has uncommitted changes to tracked files. Untracked files are no
reason to refuse, unless the merge would overwrite them. On a conflict
nothing is left half-done: no merge in progress, the target as it was, the
branch intact; the conflicting files are named and the exit status is 1.
The branch and the worktree are kept ('claude-iterate clean' removes them).
The worktree's uncommitted changes are not merged (merge takes commits):
a warning names them and the git commands that commit them, also when
there is nothing to merge.

Options:
  --squash    make one commit of the branch's work (subject: the workspace
              and its task's title)

Exit status: 0 merged; 1 error (a conflict: nothing is left half-merged);
2 usage error.

Examples:
  claude-iterate merge api-migration
  claude-iterate merge api-migration --squash
`

// runMerge is the merge command.
func runMerge(env *cliEnv, args []string) error {
	fs := newFlagSet("merge")
	squash := fs.Bool("squash", false, "")
	arg, err := parseWorkspaceArg(fs, args, "workspace")
	if err != nil {
		return err
	}
	w, st, g, release, err := openBranchWorkspace(env, arg, "merge")
	if err != nil {
		return err
	}
	defer release()
	if st.Base == "" {
		return fmt.Errorf("workspace %s's branch %s was made from commit %s, not from a branch: merge it by hand (git merge %s)", w.Name, st.Branch, shortSHA(st.BaseCommit), st.Branch)
	}
	ahead, err := countCommits(g.top, st.Base, st.Branch)
	if err != nil {
		return err
	}
	if ahead == 0 {
		fmt.Fprintf(env.stdout, "Nothing to merge: %s has no commit that %s lacks\n", st.Branch, st.Base)
		warnUncommitted(env, w, st)
		return nil
	}
	ff := isAncestor(g.top, st.Base, st.Branch)
	target := g.worktreeOf(st.Base)
	if target == "" {
		if !ff || *squash {
			return fmt.Errorf("%s is checked out nowhere, and %s cannot fast-forward it: check %s out (git switch %s), then merge again", st.Base, map[bool]string{true: "--squash", false: st.Branch}[*squash && ff], st.Base, st.Base)
		}
		return g.gitLocked(func() error {
			if _, stderr, err := gitOut(g.top, nil, "fetch", "-q", ".", "refs/heads/"+st.Branch+":refs/heads/"+st.Base); err != nil {
				return fmt.Errorf("moving %s to %s failed: %s", st.Base, st.Branch, gitFailure(stderr, err))
			}
			fmt.Fprintf(env.stdout, "Merged %s into %s: fast-forward, %s\n", st.Branch, st.Base, plural(ahead, "commit"))
			return nil
		})
	}
	if dirty, err := trackedChanges(target); err != nil {
		return err
	} else if len(dirty) > 0 {
		return fmt.Errorf("%s (where %s is checked out) has uncommitted changes to tracked files (%s): commit or stash them, then merge again", relPath(env.projectRoot, target), st.Base, listShort(dirty, 3))
	}
	if conflicts, known := mergeConflicts(target, st.Base, st.Branch); len(conflicts) > 0 {
		return conflictError(w, st, conflicts)
	} else if !known {
		ff = ff && !*squash // the merge itself will tell, and is aborted on a conflict
	}
	identity := gitIdentity(target)
	var done string
	err = g.gitLocked(func() error {
		switch {
		case ff && !*squash:
			if _, stderr, err := gitOut(target, nil, "merge", "-q", "--ff-only", st.Branch); err != nil {
				return mergeFailure(target, w, st, stderr, err, false)
			}
			done = "fast-forward, " + plural(ahead, "commit")
		case !*squash:
			msg := fmt.Sprintf("Merge %s (workspace %s)", st.Branch, w.Name)
			args := append(slices.Clone(identity), "merge", "-q", "--no-ff", "--no-edit", "-m", msg, st.Branch)
			if _, stderr, err := gitOut(target, nil, args...); err != nil {
				return mergeFailure(target, w, st, stderr, err, false)
			}
			done = "merge commit " + headShort(target) + ", " + plural(ahead, "commit")
		default:
			tip, _, _ := gitOut(target, nil, "rev-parse", "refs/heads/"+st.Branch)
			if _, stderr, err := gitOut(target, nil, "merge", "-q", "--squash", st.Branch); err != nil {
				return mergeFailure(target, w, st, stderr, err, true)
			}
			msg := fmt.Sprintf("%s: %s\n\nThe %s of branch %s, squashed.\n", w.Name, taskTitle(w), plural(ahead, "commit"), st.Branch)
			args := append(slices.Clone(identity), "commit", "-q", "-F", "-")
			if _, stderr, err := gitOut(target, []byte(msg), args...); err != nil {
				gitOut(target, nil, "reset", "-q", "--merge")
				return fmt.Errorf("the squashed commit failed (%s): %s is as it was; fix that, then merge again", commitFailure(stderr, err), st.Base)
			}
			st.Squashed = tip
			done = "squashed " + plural(ahead, "commit") + " into " + headShort(target)
		}
		return nil
	})
	if err != nil {
		return err
	}
	warnUncommitted(env, w, st)
	if st.Squashed != "" {
		if err := w.save(); err != nil {
			fmt.Fprintf(env.stderr, "%s: warning: saving %s: %v\n", progName, w.metadataPath(), unwrapPathError(err))
		}
	}
	fmt.Fprintf(env.stdout, "Merged %s into %s (%s): %s\n", st.Branch, st.Base, relPath(env.projectRoot, target), done)
	return nil
}

// openBranchWorkspace opens a workspace that has a branch, claimed (no run
// holds it until release), with its repository.
func openBranchWorkspace(env *cliEnv, arg, doing string) (*workspace, *gitState, *gitRepo, func(), error) {
	w, release, err := claimFromArgs(env, []string{arg}, doing)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	st := w.meta.Git
	if st == nil || st.Branch == "" {
		release()
		return nil, nil, nil, nil, fmt.Errorf("workspace %s has no branch of its own: %s works on a workspace run with --worktree", w.Name, doing)
	}
	if err := checkGitVersion(); err != nil {
		release()
		return nil, nil, nil, nil, err
	}
	g, err := openGitRepo(env.projectRoot, doing)
	if err == nil { // a worktree broken or on another branch (gitworktreecheck.go)
		err = worktreeRefusal(env, g, w, true)
	}
	if err == nil { // the merge's git commands read them (gitexclude.go)
		if err = excludeHazard(env.projectRoot); err == nil {
			err = excludeHazard(st.Worktree)
		}
	}
	if err != nil {
		release()
		return nil, nil, nil, nil, err
	}
	return w, st, g, release, nil
}

// countCommits counts the commits of branch that base lacks.
func countCommits(dir, base, branch string) (int, error) {
	out, stderr, err := gitOut(dir, nil, "rev-list", "--count", "refs/heads/"+base+"..refs/heads/"+branch, "--")
	if err != nil {
		return 0, fmt.Errorf("git rev-list %s..%s failed: %s", base, branch, gitFailure(stderr, err))
	}
	return strconv.Atoi(out)
}

// isAncestor reports whether branch a's tip is an ancestor of branch b's.
func isAncestor(dir, a, b string) bool {
	_, _, err := gitOut(dir, nil, "merge-base", "--is-ancestor", "refs/heads/"+a, "refs/heads/"+b)
	return err == nil
}

// trackedChanges lists the tracked files with changes in the checkout dir.
func trackedChanges(dir string) ([]string, error) {
	out, err := runGit(dir, "status", "--porcelain", "-z", "--untracked-files=no", "--no-renames")
	if err != nil {
		return nil, fmt.Errorf("git status failed in %s: %v", dir, err)
	}
	var files []string
	for _, e := range strings.Split(string(out), "\x00") {
		if len(e) > 3 {
			files = append(files, e[3:])
		}
	}
	return files, nil
}

// mergeConflicts lists the files a merge of branch into base would
// conflict in, without touching any checkout; known is false when this
// git cannot say (merge-tree --write-tree came in 2.38).
func mergeConflicts(dir, base, branch string) (files []string, known bool) {
	out, stderr, err := gitOut(dir, nil, "merge-tree", "--write-tree", "--name-only", "--no-messages", "refs/heads/"+base, "refs/heads/"+branch)
	if err == nil {
		return nil, true
	}
	if strings.Contains(stderr, "usage") || strings.Contains(stderr, "unknown option") {
		return nil, false
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 2 {
		return nil, false
	}
	for _, l := range lines[1:] { // the first line is the tree
		if l = strings.TrimSpace(l); l != "" {
			files = append(files, l)
		}
	}
	return files, true
}

// conflictError is the error of a merge that would conflict.
func conflictError(w *workspace, st *gitState, files []string) error {
	return fmt.Errorf("merging %s into %s conflicts in %s: nothing was changed; bring %s into the branch (git -C %s merge %s), resolve, then merge again", st.Branch, st.Base, listShort(files, 5), st.Base, st.Worktree, st.Base)
}

// mergeFailure undoes a failed merge in target (no merge in progress, the
// checkout as it was) and says why: a conflict, untracked files it would
// overwrite, or git's words.
func mergeFailure(target string, w *workspace, st *gitState, stderr string, err error, squash bool) error {
	var conflicts []string
	if out, _, e := gitOut(target, nil, "diff", "--name-only", "--diff-filter=U"); e == nil && out != "" {
		conflicts = strings.Split(out, "\n")
	}
	if gitDir, _, e := gitOut(target, nil, "rev-parse", "--absolute-git-dir"); e == nil {
		if _, e := os.Lstat(gitDir + "/MERGE_HEAD"); e == nil {
			gitOut(target, nil, "merge", "--abort")
		} else if squash || len(conflicts) > 0 {
			gitOut(target, nil, "reset", "-q", "--merge")
		}
	}
	if len(conflicts) > 0 {
		return conflictError(w, st, conflicts)
	}
	var untracked []string
	in := false
	for _, l := range strings.Split(stderr, "\n") {
		switch {
		case strings.Contains(l, "untracked working tree files would be overwritten"):
			in = true
		case in && strings.HasPrefix(l, "\t"):
			untracked = append(untracked, strings.TrimSpace(l))
		default:
			in = false
		}
	}
	if len(untracked) > 0 {
		return fmt.Errorf("merging %s would overwrite untracked files in %s (%s): nothing was changed; move them away, then merge again", st.Branch, target, listShort(untracked, 5))
	}
	return errors.New("git merge failed: " + gitFailure(stderr, err) + "; nothing was changed")
}

// headShort is the abbreviated HEAD of the checkout dir.
func headShort(dir string) string {
	out, _, _ := gitOut(dir, nil, "rev-parse", "--short", "HEAD")
	return out
}

// listShort names up to n items, and how many more.
func listShort(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// taskTitle is the first line of a workspace's task, without its heading
// marks.
func taskTitle(w *workspace) string {
	data, err := readRegularFile(w.instructionsPath(), taskFileCap)
	if err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(strings.TrimLeft(l, "#")); l != "" {
				return clip(stripControls(l), 72) // the agent may write the task
			}
		}
	}
	return "the work of workspace " + w.Name
}

// warnUncommitted says, after merge, that the worktree's uncommitted files
// are not merged (merge takes commits only) and how to commit them.
func warnUncommitted(env *cliEnv, w *workspace, st *gitState) {
	out, err := runGit(st.Worktree, "status", "--porcelain", "--untracked-files=all")
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		return
	}
	n := len(strings.Split(strings.TrimSpace(string(out)), "\n"))
	one := n == 1
	them := map[bool]string{true: "it", false: "them"}[one]
	fmt.Fprintf(env.stderr, "%s: warning: %s uncommitted in the worktree %s %s not merged: commit %s (%s%s), then merge again\n",
		progName, plural(n, "file"), relPath(env.projectRoot, st.Worktree), map[bool]string{true: "is", false: "are"}[one], them,
		commitCommand(env, st.Worktree), nextRunCommits(env, w, them))
}
