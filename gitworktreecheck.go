package main

// This file checks that a workspace's worktree is still its own before
// any git command runs in it. git run in a directory that is not a
// worktree of its own works on the repository around it: the project's
// main checkout, whose files a commit, a status or an archived patch
// would then take for the agent's. The rules are:
//
//   - The path is the worktree when it is a directory (not a link to
//     one), its .git a regular file (never opened otherwise: a named pipe
//     would block) naming a worktree of this repository, git's top level
//     there the path itself, and it is on the workspace's branch.
//   - Nothing at the path is "missing" (deleted by hand, or removed by
//     clean): the next run makes it again, as before.
//   - Anything else is "broken": every command refuses to run git there
//     and says why and how to repair it (remove the link; git worktree
//     repair; move it away), never falling through to the main checkout.
//   - On another branch (the agent switched, or a detached HEAD): run,
//     merge and pr refuse, clean without --force too, naming both branches
//     and how to get back; status and list never say it merged; the tool
//     never switches back itself, over the agent's work.
//   - A run checks again after each iteration, before its scan and its
//     commit, without starting git: the path still a directory, not a link
//     (the work tree git is given: strayPath), and the HEAD of the run's git directory still on the
//     branch; else nothing is committed and the run stops (strayEnding).
//     A .git the agent deleted or replaced does not stop the run: its git
//     commands name the worktree's git directory (git-guard); a warning,
//     once, says what the next run, merge and clean will refuse.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// worktreeFault is what is wrong with a workspace's worktree.
type worktreeFault struct {
	missing bool   // nothing at the path
	broken  bool   // something else than the worktree at the path
	on      string // off its branch: the branch it is on ("HEAD": detached)
	what    string // the fault, in a sentence
	fix     string // how to repair it
}

// Error is the fault and its fix, one line.
func (f *worktreeFault) Error() string { return f.what + ": " + f.fix }

// checkWorktree says what is wrong with st's worktree (of workspace ws,
// in the repository whose common git directory is common); nil when it is
// the worktree, on its branch. root is the project's root, for the paths
// the messages show.
func checkWorktree(common, root, ws string, st *gitState) *worktreeFault {
	f, gitDir := checkWorktreeFiles(common, root, ws, st)
	if f != nil {
		return f
	}
	path, shown := st.Worktree, relPath(root, st.Worktree)
	repair := fmt.Sprintf("repair it (git worktree repair %s), or move it away and run again (the branch %s is kept)", shown, st.Branch)
	broken := func(why string) *worktreeFault { return brokenWorktree(shown, ws, why, repair) }
	out, stderr, err := gitOut(path, nil, "rev-parse", "--show-toplevel", "--git-common-dir")
	if err != nil {
		return broken("git rev-parse fails there: " + gitFailure(stderr, err))
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 2 {
		return broken(fmt.Sprintf("git rev-parse said %q there", out))
	}
	if c := lines[1]; !sameDir(joinIfRelative(path, c), common) {
		return broken("git finds the repository " + c + " there")
	}
	if !sameDir(lines[0], path) {
		return broken("git's top level there is " + lines[0])
	}
	branch, sha, err := headOf(gitDir)
	if err != nil {
		return broken("its HEAD: " + err.Error())
	}
	if branch == st.Branch {
		return nil
	}
	f = &worktreeFault{on: branch}
	on, back := "branch "+branch, branch
	if branch == "" {
		f.on, on, back = "HEAD", fmt.Sprintf("a detached HEAD (commit %s)", shortSHA(sha)), shortSHA(sha)
	}
	f.what = fmt.Sprintf("the worktree %s of workspace %s is on %s, not on its branch %s", shown, ws, on, st.Branch)
	f.fix = fmt.Sprintf("get back with 'git -C %s switch %s' (commit or stash its changes first; 'git merge %s' there takes the commits of %s), then run again", shown, st.Branch, back, back)
	return f
}

// checkWorktreeFiles is the part of checkWorktree that starts no git:
// the path a directory, its .git a regular file naming a worktree of this
// repository, whose git directory it returns.
func checkWorktreeFiles(common, root, ws string, st *gitState) (*worktreeFault, string) {
	if f := checkWorktreePath(root, ws, st); f != nil {
		if f.missing {
			if to := movedWorktree(common, st.Branch); to != "" && sameDir(to, defaultWorktreeDir(root, ws)) && st.Worktree != to {
				// Recorded through a symbolic link since removed (an older
				// version's record): the same worktree, at its real path.
				st.Worktree = to
				return checkWorktreeFiles(common, root, ws, st)
			} else if to != "" {
				shown := relPath(root, st.Worktree)
				return &worktreeFault{broken: true, what: fmt.Sprintf("the worktree %s of workspace %s was moved to %s (git worktree move), where its branch %s is checked out", shown, ws, clip(stripControls(to), 200), st.Branch),
					fix: fmt.Sprintf("move it back (git worktree move %s %s), then run again", clip(stripControls(to), 200), shown)}, ""
			}
		}
		return f, ""
	}
	path, shown := st.Worktree, relPath(root, st.Worktree)
	broken := func(why, fix string) *worktreeFault { return brokenWorktree(shown, ws, why, fix) }
	repair := fmt.Sprintf("repair it (git worktree repair %s), or move it away and run again (the branch %s is kept)", shown, st.Branch)
	dotGit := filepath.Join(path, ".git")
	gfi, err := os.Lstat(dotGit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return broken("it has no .git file", repair), ""
	case err != nil:
		return broken("its .git: "+unwrapPathError(err).Error(), repair), ""
	case !gfi.Mode().IsRegular():
		return broken("its .git is "+fileKind(gfi)+", not a file", fmt.Sprintf("remove %s, then %s", relPath(root, dotGit), repair)), ""
	}
	data, err := readRegularFile(dotGit, 4096)
	if err != nil {
		return broken("its .git: "+unwrapPathError(err).Error(), repair), ""
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok || gitDir == "" {
		return broken("its .git names no git directory", repair), ""
	}
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(path, gitDir)
	}
	if !sameDir(filepath.Dir(gitDir), filepath.Join(common, "worktrees")) {
		return broken("its .git names "+clip(stripControls(gitDir), 200)+", not a worktree of this repository", repair), ""
	}
	return nil, gitDir
}

// movedWorktree is where a worktree of the repository whose common git
// directory is common, on branch, now is, when git still knows it there
// (git worktree move updates its record): "" when none is, or its record
// cannot be read. Only git's own small files are read, never run.
func movedWorktree(common, branch string) string {
	admins, err := readDir(filepath.Join(common, "worktrees"))
	if err != nil {
		return ""
	}
	for _, a := range admins {
		dir := filepath.Join(common, "worktrees", a.Name())
		head, err := readRegularFile(filepath.Join(dir, "HEAD"), 4096)
		if err != nil || strings.TrimSpace(string(head)) != "ref: refs/heads/"+branch {
			continue
		}
		gitdir, err := readRegularFile(filepath.Join(dir, "gitdir"), 4096)
		if err != nil {
			continue
		}
		to := filepath.Dir(strings.TrimSpace(string(gitdir)))
		if fi, err := os.Lstat(to); err == nil && fi.IsDir() {
			return to
		}
	}
	return ""
}

// checkWorktreePath is the part of checkWorktreeFiles that looks at the
// path alone: nothing there, or something else than a directory (a link).
func checkWorktreePath(root, ws string, st *gitState) *worktreeFault {
	path, shown := st.Worktree, relPath(root, st.Worktree)
	broken := func(why, fix string) *worktreeFault { return brokenWorktree(shown, ws, why, fix) }
	again := fmt.Sprintf("then run again: the run makes the worktree again on its branch %s", st.Branch)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &worktreeFault{missing: true, what: fmt.Sprintf("the worktree %s of workspace %s is gone", shown, ws), fix: "run again: the run makes it again on its branch " + st.Branch}
	case err != nil:
		return broken(unwrapPathError(err).Error(), fmt.Sprintf("look at it, %s", again))
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return broken("it is a symbolic link to "+clip(stripControls(target), 200), fmt.Sprintf("remove the link (rm %s), %s", shown, again))
	case !fi.IsDir():
		return broken("it is "+fileKind(fi), fmt.Sprintf("move it away, %s", again))
	}
	return nil
}

// brokenWorktree says that shown, workspace ws's worktree, is no longer a
// worktree of this repository, why, and fix.
func brokenWorktree(shown, ws, why, fix string) *worktreeFault {
	return &worktreeFault{broken: true, what: fmt.Sprintf("%s, workspace %s's worktree, is no longer a worktree of this repository (%s)", shown, ws, why), fix: fix}
}

// joinIfRelative is p, made absolute from dir when it is relative.
func joinIfRelative(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// headOf reads the HEAD of the git directory gitDir: the branch it is on,
// or, detached, "" and its commit. The file is read as git stores it,
// without starting git; git is asked when it says neither (a reftable
// repository).
func headOf(gitDir string) (branch, sha string, err error) {
	data, err := readRegularFile(filepath.Join(gitDir, "HEAD"), 4096)
	if err != nil {
		return "", "", unwrapPathError(err)
	}
	head := strings.TrimSpace(string(data))
	if ref, ok := strings.CutPrefix(head, "ref: "); ok {
		if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok && b != ".invalid" {
			return b, "", nil
		}
	} else if s := shaOrEmpty(head); s != "" {
		return "", s, nil
	}
	env := []string{"GIT_DIR=" + gitDir}
	if ref, _, err := gitRunWith("", nil, env, "symbolic-ref", "-q", "HEAD"); err == nil {
		return strings.TrimPrefix(ref, "refs/heads/"), "", nil
	}
	s, stderr, err := gitRunWith("", nil, env, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return "", "", errors.New(gitFailure(stderr, err))
	}
	return "", s, nil
}

// worktreeRefusal is the error of a command that needs w's worktree (run
// git in it): nil when it is there and on its branch, or missing and
// missingOK.
func worktreeRefusal(env *cliEnv, g *gitRepo, w *workspace, missingOK bool) error {
	st := w.meta.Git
	f := checkWorktree(g.common, env.projectRoot, w.Name, st)
	if f == nil || f.missing && missingOK {
		return nil
	}
	return f
}

// strayed checks, after an iteration and before its commit, that the
// run's worktree is still on its branch; when the agent switched, nothing
// is committed (on the branch the agent chose, the work would be hidden),
// the record says why, and the run ends (strayEnding). It reports whether
// it did.
func strayed(s *runGitSetup, g *gitTree, rec *iterationRecord, after *gitSnapshot) bool {
	if s == nil || s.state == nil {
		return false
	}
	if s.stray == nil {
		// The path first, no git started: a link put there since the run
		// began would have the commit take the main checkout's files (the
		// work tree git is given is the path). Its .git matters not: the
		// run gives git the worktree's git directory (git-guard).
		root, st := s.root, *s.state
		f := checkWorktreePath(root, s.ws.Name, &st)
		if f == nil {
			branch, sha, err := headOf(s.gitDir)
			switch {
			case err != nil:
				f = &worktreeFault{broken: true, what: fmt.Sprintf("the HEAD of the worktree %s cannot be read (%v)", relPath(root, st.Worktree), err), fix: "look at it (git -C " + relPath(root, st.Worktree) + " status), then run again"}
			case branch != st.Branch:
				if f = checkWorktree(s.repo.common, root, s.ws.Name, &st); f == nil { // switched back since
					f = &worktreeFault{on: branch, what: fmt.Sprintf("the worktree %s of workspace %s was on %s, not on its branch %s", relPath(root, st.Worktree), s.ws.Name, firstNonEmpty(branch, shortSHA(sha)), st.Branch), fix: "run again"}
				}
			}
		}
		if f == nil {
			dotGitCheck(s, rec.Iteration)
			return false
		}
		s.stray = f
	}
	rec.Commit, rec.CommitError = []byte("null"), s.stray.what
	if g != nil {
		g.next = after
	}
	if s.stray.on != "" {
		s.con.noticef("iteration %d: not committed: %s; the changes stay in %s", rec.Iteration, s.stray.what, relPath(s.root, s.state.Worktree))
	} else {
		s.con.noticef("iteration %d: not committed: %s", rec.Iteration, s.stray.what)
	}
	s.log.printf("NOT COMMITTED: %s", s.stray.what)
	return true
}

// dotGitCheck warns, once a run, when the worktree's .git is no longer
// the file naming its git directory (the agent deleted or replaced it):
// the run goes on, its git commands name that directory (git-guard), but
// git in the worktree, the next run, merge and clean refuse it until it is
// repaired, and the warning says so where it happened.
func dotGitCheck(s *runGitSetup, iteration int) {
	if s.dotGitTold {
		return
	}
	st := *s.state
	f, _ := checkWorktreeFiles(s.repo.common, s.root, s.ws.Name, &st)
	if f == nil {
		return
	}
	s.dotGitTold = true
	goesOn := "this run goes on"
	if s.commit {
		goesOn += " committing to its branch"
	}
	s.con.errorf("warning: iteration %d: %s; %s, but the next run, merge and clean refuse it: %s", iteration, f.what, goesOn, f.fix)
	s.log.printf("[warning: %s: %s]", f.what, f.fix)
}

// strayPath checks, before the scan that ends an iteration, that the
// run's worktree path is still a directory, not a link: the scan gives git
// the path as its work tree, and through a link to the main checkout it
// would list the user's files as the agent's. It sets the run's fault
// (strayed then records it), and reports whether the scan is to be left
// out.
func strayPath(s *runGitSetup) bool {
	if s == nil || s.state == nil {
		return false
	}
	if s.stray == nil {
		st := *s.state
		s.stray = checkWorktreePath(s.root, s.ws.Name, &st)
	}
	return s.stray != nil && s.stray.on == ""
}

// strayEnding is the ending of a run whose worktree left its branch
// (strayed); nil when it did not.
func strayEnding(s *runGitSetup) *ending {
	if s == nil || s.stray == nil {
		return nil
	}
	why := "the agent switched branch"
	switch {
	case s.stray.missing:
		why = "it was deleted"
	case s.stray.broken:
		why = "the run stops"
	}
	return &ending{code: exitError, status: statusFailed, reason: "error: " + s.stray.what + ": " + why + "; nothing more is committed", hint: s.stray.fix}
}
