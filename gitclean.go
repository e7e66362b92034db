package main

// This file is clean's part for a workspace with a git worktree. The rules
// are:
//
//   - clean refuses while the branch has commits that no other branch
//     holds (a squash merge of its tip counts as holding them), or the
//     worktree has uncommitted changes; --force overrides, and then the
//     archive keeps a patch of what was not merged (unmerged.patch: the
//     commits, as git format-patch writes them, then the uncommitted
//     changes, new files included), so --no-archive is refused with it.
//   - The worktree is removed with git worktree remove, never by deleting
//     a directory; one deleted by hand is pruned, with a warning.
//   - The branch is kept unless --delete-branch.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// unmergedPatchFile is the patch of unmerged work put in the archive.
const unmergedPatchFile = "unmerged.patch"

// gitCleanPlan is what clean does to a workspace's git work.
type gitCleanPlan struct {
	repo         *gitRepo
	st           *gitState
	unmerged     int  // commits no other branch holds
	uncommitted  bool // the worktree has changes not committed
	missing      bool // the worktree was deleted by hand
	removed      bool // or removed by an earlier clean (a restored workspace)
	deleteBranch bool
}

// planGitClean checks w's git work before clean removes it; nil when it
// has none.
func planGitClean(env *cliEnv, w *workspace, force, noArchive, deleteBranch bool) (*gitCleanPlan, error) {
	st := w.meta.Git
	if st == nil || st.Worktree == "" {
		if deleteBranch {
			return nil, usagef("--delete-branch: workspace %s has no branch of its own", w.Name)
		}
		return nil, nil
	}
	if err := checkGitVersion(); err != nil {
		return nil, err
	}
	g, err := openGitRepo(env.projectRoot, "clean")
	if err != nil {
		return nil, err
	}
	p := &gitCleanPlan{repo: g, st: st, deleteBranch: deleteBranch, removed: st.Removed}
	f := checkWorktree(g.common, env.projectRoot, w.Name, st) // gitworktreecheck.go
	switch {
	case f != nil && f.broken: // git there would take the main checkout's files for its own
		return nil, fmt.Errorf("not cleaning workspace %s: %v", w.Name, f)
	case f != nil && !f.missing && !force:
		return nil, fmt.Errorf("not cleaning workspace %s: %v; or clean --force (the archive keeps a patch of its uncommitted changes; the branch %s is kept)", w.Name, f, f.on)
	}
	if f != nil && f.missing {
		p.missing = true
	} else if err := excludeHazard(st.Worktree); err != nil { // gitexclude.go
		return nil, err
	} else if out, err := runGit(st.Worktree, "status", "--porcelain", "--untracked-files=all"); err != nil {
		return nil, fmt.Errorf("git status failed in %s: %v", st.Worktree, err)
	} else {
		p.uncommitted = strings.TrimSpace(string(out)) != ""
	}
	if g.branchExists(st.Branch) {
		ref := "refs/heads/" + st.Branch
		out, stderr, err := gitOut(g.top, nil, "rev-list", "--count", ref, "--not", "--exclude="+st.Branch, "--branches")
		if err != nil {
			return nil, fmt.Errorf("git rev-list %s failed: %s", st.Branch, gitFailure(stderr, err))
		}
		p.unmerged, _ = strconv.Atoi(out)
		if tip, _, _ := gitOut(g.top, nil, "rev-parse", ref); p.unmerged > 0 && tip == st.Squashed {
			p.unmerged = 0
		}
	}
	if p.unmerged == 0 && !p.uncommitted {
		return p, nil
	}
	var what []string
	if p.unmerged > 0 {
		what = append(what, fmt.Sprintf("its branch %s has %s that no other branch holds", st.Branch, plural(p.unmerged, "commit")))
	}
	if p.uncommitted {
		what = append(what, fmt.Sprintf("its worktree %s has uncommitted changes", relPath(env.projectRoot, st.Worktree)))
	}
	switch {
	case !force && p.uncommitted: // merge takes commits only: say how to make them
		return nil, withHint(fmt.Errorf("not cleaning workspace %s: %s", w.Name, strings.Join(what, ", and ")),
			"commit them (%s%s), then %s; or clean --force (the archive keeps a patch of them)", commitCommand(env, st.Worktree), nextRunCommits(env, w, "them"), wsCommand(w, "merge"))
	case !force:
		return nil, fmt.Errorf("not cleaning workspace %s: %s: merge them first (%s), or clean --force (the archive keeps a patch of them)", w.Name, strings.Join(what, ", and "), wsCommand(w, "merge"))
	}
	if noArchive {
		return nil, fmt.Errorf("not cleaning workspace %s without an archive: %s, and the archive keeps their patch: leave out --no-archive", w.Name, strings.Join(what, ", and "))
	}
	return p, nil
}

// writePatch writes what was not merged into the workspace directory, for
// the archive.
func (p *gitCleanPlan) writePatch(w *workspace) error {
	if p == nil || (p.unmerged == 0 && !p.uncommitted) {
		return nil
	}
	var b strings.Builder
	if p.unmerged > 0 {
		ref := "refs/heads/" + p.st.Branch
		out, stderr, err := gitOut(p.repo.top, nil, "format-patch", "--stdout", ref, "--not", "--exclude="+p.st.Branch, "--branches")
		if err != nil {
			return fmt.Errorf("git format-patch %s failed: %s", p.st.Branch, gitFailure(stderr, err))
		}
		b.WriteString(out + "\n")
	}
	if p.uncommitted {
		// A scratch index takes every change, new files included, and
		// leaves the worktree's own index as it is.
		index := filepath.Join(w.StateDir, ".unmerged-index"+tempSuffix)
		defer os.Remove(index)
		env := "GIT_INDEX_FILE=" + index
		if _, stderr, err := gitOutEnv(p.st.Worktree, env, "read-tree", "HEAD"); err != nil {
			return fmt.Errorf("reading the worktree's HEAD: %s", gitFailure(stderr, err))
		}
		if _, stderr, err := gitOutEnv(p.st.Worktree, env, "add", "-A"); err != nil {
			return fmt.Errorf("listing the worktree's changes: %s", gitFailure(stderr, err))
		}
		out, stderr, err := gitOutEnv(p.st.Worktree, env, "diff", "--cached", "--binary", "HEAD")
		if err != nil {
			return fmt.Errorf("git diff in %s failed: %s", p.st.Worktree, gitFailure(stderr, err))
		}
		b.WriteString("# The changes not committed in the worktree " + p.st.Worktree + ":\n" + out + "\n")
	}
	return writeFileAtomicSync(filepath.Join(w.Dir, unmergedPatchFile), []byte(b.String()), 0o644, true)
}

// markRemoved says in w's metadata, before it is archived, that clean
// removes the worktree: the restored workspace knows it was not deleted by
// hand. A clean that stops before removing it leaves the mark, which the
// next run, finding the worktree, clears.
func (p *gitCleanPlan) markRemoved(w *workspace) error {
	if p == nil || p.removed {
		return nil
	}
	p.st.Removed = true
	return w.save()
}

// remove removes the worktree (git worktree remove; pruned when it was
// deleted by hand) and, with --delete-branch, the branch.
func (p *gitCleanPlan) remove(env *cliEnv) error {
	if p == nil {
		return nil
	}
	return p.repo.gitLocked(func() error {
		if p.missing {
			if !p.removed { // a restored workspace's: clean removed it
				fmt.Fprintf(env.stderr, "%s: warning: the worktree %s was deleted by hand: pruned\n", progName, relPath(env.projectRoot, p.st.Worktree))
			}
			if _, stderr, err := gitOut(p.repo.top, nil, "worktree", "prune"); err != nil {
				return fmt.Errorf("git worktree prune failed: %s", gitFailure(stderr, err))
			}
		} else {
			if _, stderr, err := gitOut(p.repo.top, nil, "worktree", "remove", "--force", p.st.Worktree); err != nil {
				return fmt.Errorf("git worktree remove %s failed: %s", p.st.Worktree, gitFailure(stderr, err))
			}
			fmt.Fprintf(env.stdout, "Removed the worktree %s\n", relPath(env.projectRoot, p.st.Worktree))
		}
		if !p.deleteBranch {
			if p.repo.branchExists(p.st.Branch) {
				fmt.Fprintf(env.stdout, "Kept the branch %s (--delete-branch removes it)\n", p.st.Branch)
			}
			return nil
		}
		if _, stderr, err := gitOut(p.repo.top, nil, "branch", "-q", "-D", p.st.Branch); err != nil {
			return fmt.Errorf("git branch -D %s failed: %s", p.st.Branch, gitFailure(stderr, err))
		}
		fmt.Fprintf(env.stdout, "Deleted the branch %s\n", p.st.Branch)
		return nil
	})
}

// nextRunCommits is ", or the next 'claude-iterate run W' commits them
// first" (what: "it" or "them") when the workspace's next run would
// commit a worktree's leftovers (git.commit is not false in its
// configuration); "" when it would not. A broken config file is left out.
func nextRunCommits(env *cliEnv, w *workspace, what string) string {
	project, user, _ := baseLayersLenient(env.projectRoot)
	if !resolveSettings(envLayer(), w.meta.configLayer, project, user).GitCommit {
		return ""
	}
	return fmt.Sprintf(", or the next '%s' commits %s first", wsCommand(w, "run"), what)
}

// commitCommand is the git command that commits every change in the
// worktree at dir, for a hint.
func commitCommand(env *cliEnv, dir string) string {
	q := shellQuote(relPath(env.projectRoot, dir))
	return fmt.Sprintf("git -C %s add -A && git -C %s commit", q, q)
}
