package main

// This file gives a workspace a git worktree of its own (run --worktree,
// config git.worktree). The rules are:
//
//   - The worktree is claude-iterate/worktrees/<workspace> under the project
//     root, on branch claude-iterate/<workspace> (--branch), made from the
//     current HEAD (--base). Its directory is kept out of the main
//     checkout's git status by a block in the repository's info/exclude,
//     never by a tracked file; the main checkout's HEAD, index and files
//     are never touched.
//   - The workspace's own files stay where they are; the agent, its
//     prompts' project root, the tests and the conditions work in the
//     worktree (runPlan.workRoot).
//   - The metadata keeps the worktree, its branch and its base; the next
//     run reuses them. A worktree deleted by hand is pruned, with a
//     warning, and made again on its branch.
//   - Only the git command line, every command bounded in time; the ones
//     that take git's locks (worktree add, add, commit, merge) hold the
//     repository's claude-iterate lock (gitLocked), so that two runs never
//     meet on index.lock.
//   - Every fault is one line naming its fix: no repository, a bare one, a
//     detached HEAD without --base, a branch checked out in another
//     worktree, a worktree path already taken, git missing or too old. A
//     repository with submodules gets a worktree whose submodules are not
//     checked out, with a warning saying how to check them out.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// worktreesDirName holds the workspaces' worktrees, under the project root.
const worktreesDirName = "claude-iterate/worktrees"

// branchPrefix starts the name of a workspace's branch.
const branchPrefix = "claude-iterate/"

// gitMinMajor and gitMinMinor are the oldest git the worktrees need
// (--pathspec-from-file came in 2.26).
const gitMinMajor, gitMinMinor = 2, 26

// gitLockFile, in the repository's common git directory, serialises the
// tool's git commands that take git's own locks.
const gitLockFile = "claude-iterate.lock"

// gitState is a workspace's git setup, kept in its metadata.
type gitState struct {
	// Worktree is the worktree's directory; "" for a run that commits on
	// the current branch of the project's checkout (--commit alone).
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch"`
	// Base is the branch the worktree was made from ("" when --base named
	// a commit), BaseCommit the commit.
	Base       string `json:"base,omitempty"`
	BaseCommit string `json:"baseCommit,omitempty"`
	// Squashed is the branch's tip that the last merge --squash took.
	Squashed string `json:"squashed,omitempty"`
	// Removed: clean removed the worktree (the metadata it archived says
	// so); a restored workspace's next run makes it again on its branch.
	Removed bool `json:"removed,omitempty"`
}

// gitRepo is the repository a workspace's git work happens in.
type gitRepo struct {
	top    string // the main checkout's top directory
	common string // the common git directory
}

// gitOut runs git in dir with stdin (may be nil), bounded by gitTimeout,
// and returns its stdout and stderr, trimmed.
func gitOut(dir string, stdin []byte, args ...string) (string, string, error) {
	return gitRunWith(dir, stdin, nil, args...)
}

// gitOutEnv is gitOut with one more environment variable (NAME=value).
func gitOutEnv(dir, env string, args ...string) (string, string, error) {
	return gitRunWith(dir, nil, []string{env}, args...)
}

// gitRunWith is gitOut with more environment variables.
func gitRunWith(dir string, stdin []byte, env []string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := outputOwn(cmd)
	if ctx.Err() != nil {
		return "", "", gitStalled("git "+gitVerb(args), dir)
	}
	return strings.TrimSpace(string(out)), strings.TrimSpace(stderr.String()), err
}

// gitFailure describes a failed git command: its last line of stderr.
func gitFailure(stderr string, err error) string {
	if stderr != "" {
		lines := strings.Split(stderr, "\n")
		return strings.TrimPrefix(strings.TrimPrefix(lines[len(lines)-1], "fatal: "), "error: ")
	}
	return err.Error()
}

// checkGitVersion refuses a missing git, or one older than the worktrees
// need.
func checkGitVersion() error {
	if _, err := exec.LookPath("git"); err != nil {
		return fmt.Errorf("git is not installed (not found on PATH): install git %d.%d or later, or run without --worktree and --commit", gitMinMajor, gitMinMinor)
	}
	out, _, err := gitOut("", nil, "version")
	if err != nil {
		return fmt.Errorf("git version failed (%v): check the git on PATH, or run without --worktree and --commit", err)
	}
	f := strings.Fields(out) // git version 2.39.5
	if len(f) >= 3 {
		parts := strings.SplitN(f[2], ".", 3)
		if len(parts) >= 2 {
			major, e1 := strconv.Atoi(parts[0])
			minor, e2 := strconv.Atoi(parts[1])
			if e1 == nil && e2 == nil && (major < gitMinMajor || major == gitMinMajor && minor < gitMinMinor) {
				return fmt.Errorf("git %s is too old: --worktree and --commit need git %d.%d or later; upgrade git, or run without them", f[2], gitMinMajor, gitMinMinor)
			}
		}
	}
	return nil
}

// refuseGitDir refuses dir, a project root or a new workspace's directory,
// when it lies in a git directory (a bare repository, or a checkout's
// .git), where git keeps its own files and no agent should work: exit 2,
// before anything is made there (tryout 7). It finds the repository as git
// does, from the files alone: no git runs, and none need be installed.
func refuseGitDir(dir, what string) error {
	for d := realPath(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return nil // in a checkout
		}
		if isGitDir(d) {
			if filepath.Base(d) == ".git" {
				return &inputError{withHint(fmt.Errorf("%s %s is inside the git directory of the checkout %s, where git keeps its own files", what, dir, filepath.Dir(d)), "work from the checkout: cd %s", shellQuote(filepath.Dir(d)))}
			}
			return &inputError{withHint(fmt.Errorf("%s %s is in a bare repository, which has no checkout to work in", what, dir), "clone it ('git clone %s work') and work there", shellQuote(d))}
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// isGitDir reports whether d is a git directory, as git tells one: a HEAD
// naming a ref or a commit, and objects/ and refs/ directories.
func isGitDir(d string) bool {
	head, err := readRegularFile(filepath.Join(d, "HEAD"), 4096)
	if err != nil {
		return false
	}
	h := strings.TrimSpace(string(head))
	if !strings.HasPrefix(h, "ref: refs/") && (len(h) < 40 || strings.Trim(h, "0123456789abcdef") != "") {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(d, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// placeError is openGitRepoFrom's refusal of the place: no repository, or
// a bare one.
type placeError struct{ err error }

func (e *placeError) Error() string { return e.err.Error() }
func (e *placeError) Unwrap() error { return e.err }

// openGitRepo finds the repository around dir, refusing none and a bare one.
func openGitRepo(dir, what string) (*gitRepo, error) {
	return openGitRepoFrom(dir, what, "")
}

// openGitRepoFrom is openGitRepo for a setting the user did not give on
// the command line: from says where it is set (worktreeSource), and the
// refusals name it rather than the flag. No repository, or a bare one, for
// a flag (what "--worktree") or a setting is a usage fault: exit 2.
func openGitRepoFrom(dir, what, from string) (g *gitRepo, err error) {
	defer func() {
		if err != nil && errors.As(err, new(*placeError)) && (from != "" || strings.HasPrefix(what, "--")) {
			err = &inputError{err}
		}
	}()
	bare, stderr, err := gitOut(dir, nil, "rev-parse", "--is-bare-repository")
	if err != nil {
		if strings.Contains(stderr, "not a git repository") {
			if from != "" {
				return nil, &placeError{fmt.Errorf("%s, and %s is not in a git repository: run 'git init' there and commit once, or run this once with --no-worktree", from, dir)}
			}
			return nil, &placeError{fmt.Errorf("%s needs a git repository, and %s is not in one: run 'git init' there and commit once, or run without %s", what, dir, what)}
		}
		return nil, fmt.Errorf("%s: git rev-parse failed in %s: %s", what, dir, gitFailure(stderr, err))
	}
	if bare == "true" {
		if from != "" {
			return nil, &placeError{fmt.Errorf("%s, and %s is in a bare repository: clone it ('git clone %s work') and run there, or run this once with --no-worktree", from, dir, dir)}
		}
		return nil, &placeError{fmt.Errorf("%s needs a checkout, and %s is in a bare repository: clone it ('git clone %s work') and run there", what, dir, dir)}
	}
	out, stderr, err := gitOut(dir, nil, "rev-parse", "--show-toplevel", "--git-common-dir")
	if err != nil {
		return nil, fmt.Errorf("%s needs a checkout: git rev-parse failed in %s: %s; run from the checkout's directory", what, dir, gitFailure(stderr, err))
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("%s: git rev-parse in %s said %q", what, dir, out)
	}
	g = &gitRepo{top: lines[0], common: lines[1]}
	if !filepath.IsAbs(g.common) {
		g.common = filepath.Join(dir, g.common)
	}
	g.top = realPath(g.top)
	g.common = realPath(g.common)
	return g, nil
}

// gitLocked runs fn holding the repository's claude-iterate lock.
func (g *gitRepo) gitLocked(fn func() error) error {
	unlock, err := lockMaking(filepath.Join(g.common, gitLockFile), 0o644)
	if err != nil {
		return fmt.Errorf("locking %s: %w", filepath.Join(g.common, gitLockFile), unwrapPathError(err))
	}
	defer unlock()
	return fn()
}

// defaultWorktreeDir is where a workspace's worktree is made: under the
// project root's real path, so that a run through a symbolic link to the
// project (macOS's /tmp) records the path git does, which stays the same
// once the link is gone (tryout 7).
func defaultWorktreeDir(projectRoot, name string) string {
	return filepath.Join(realPath(projectRoot), filepath.FromSlash(worktreesDirName), name)
}

// realPath is path with its symbolic links resolved, or path itself when
// they cannot be.
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// worktreeOwner returns the workspace beside w whose worktree dir is, nil
// when dir is not a workspace's worktree: clean frees that one, and git
// worktree remove would pull it from under the workspace.
func worktreeOwner(projectRoot string, w *workspace, dir string) *workspace {
	name := filepath.Base(dir)
	if !sameDir(filepath.Dir(dir), filepath.Dir(defaultWorktreeDir(projectRoot, name))) || w.StateDir == "" {
		return nil
	}
	owner := &workspace{Name: name, StateDir: filepath.Join(filepath.Dir(w.StateDir), name)}
	if fi, err := os.Lstat(owner.StateDir); err != nil || !fi.IsDir() {
		return nil
	}
	return owner
}

// worktreeOf returns the checkout the branch is checked out in, "" if none.
func (g *gitRepo) worktreeOf(branch string) string {
	out, _, err := gitOut(g.top, nil, "worktree", "list", "--porcelain")
	if err != nil {
		return ""
	}
	var path string
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			path = p
		}
		if b, ok := strings.CutPrefix(line, "branch "); ok && b == "refs/heads/"+branch {
			return path
		}
	}
	return ""
}

// hasCommit reports whether the repository has a commit: one made by
// 'git init' has none until its first.
func (g *gitRepo) hasCommit() bool {
	// Branches and tags only: --all reads every worktree's HEAD too, and
	// one another run is making at this moment fails it (git-many).
	out, _, err := gitOut(g.top, nil, "for-each-ref", "--count=1", "--format=%(objectname)", "refs/heads", "refs/tags")
	return err == nil && out != ""
}

// branchExists reports whether refs/heads/branch exists.
func (g *gitRepo) branchExists(branch string) bool {
	_, _, err := gitOut(g.top, nil, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	return err == nil
}

// worktreeRequest is what a run asks of the workspace's worktree.
type worktreeRequest struct {
	branch, base string // from --branch and --base; "" for the defaults
	// from says where git.worktree is set when no flag set it
	// (worktreeSource); "" for --worktree.
	from string
	warn func(format string, args ...any)
}

// ensureWorktree makes w's worktree, or finds the one it has, and returns
// its state (also set in w.meta.Git; the caller saves the metadata).
func ensureWorktree(projectRoot string, w *workspace, req worktreeRequest) (*gitRepo, *gitState, error) {
	if err := checkGitVersion(); err != nil {
		return nil, nil, err
	}
	g, err := openGitRepoFrom(projectRoot, "--worktree", req.from)
	if err != nil {
		return nil, nil, err
	}
	if st := w.meta.Git; st != nil && st.Worktree != "" {
		if req.branch != "" && req.branch != st.Branch {
			return nil, nil, &inputError{fmt.Errorf("workspace %s already works on branch %s in %s: --branch names a new worktree's branch only; leave it out, or 'claude-iterate clean' the workspace first", w.Name, st.Branch, st.Worktree)}
		}
		if req.base != "" {
			return nil, nil, &inputError{fmt.Errorf("workspace %s's worktree exists already, made from %s: --base names a new worktree's start only; leave it out, or 'claude-iterate clean' the workspace first", w.Name, firstNonEmpty(st.Base, shortSHA(st.BaseCommit)))}
		}
		f := checkWorktree(g.common, projectRoot, w.Name, st) // gitworktreecheck.go
		if f == nil {
			st.Worktree = realPath(st.Worktree) // a record made through a link: its real path from now on
			st.Removed = false                  // a clean that did not get to remove it
			return g, st, nil
		}
		if !f.missing {
			return nil, nil, f
		}
		if st.Removed {
			req.warn("the worktree of workspace %s (%s) was removed by 'claude-iterate clean': made again on its branch %s", w.Name, st.Worktree, st.Branch)
		} else {
			req.warn("the worktree of workspace %s (%s) was deleted by hand: pruned, and made again on its branch %s", w.Name, st.Worktree, st.Branch)
		}
		if err := g.gitLocked(func() error { _, _, err := gitOut(g.top, nil, "worktree", "prune"); return err }); err != nil {
			return nil, nil, fmt.Errorf("git worktree prune: %v", err)
		}
		req.branch = st.Branch
	}
	branch := req.branch
	if branch == "" {
		branch = branchPrefix + w.Name
	}
	if _, stderr, err := gitOut(g.top, nil, "check-ref-format", "--branch", branch); err != nil {
		why := gitFailure(stderr, err)
		if strings.Contains(why, "not a valid branch name") {
			why = "" // git says only that
		} else {
			why = " (" + why + ")"
		}
		return nil, nil, &inputError{fmt.Errorf("%q is not a valid branch name%s: choose another with --branch", branch, why)} // exit 2, as a bad flag value
	}
	dir := defaultWorktreeDir(projectRoot, w.Name)
	if _, err := os.Lstat(dir); err == nil {
		return nil, nil, fmt.Errorf("the worktree path %s is occupied: %s, then run again", dir, g.freeHint(dir))
	}
	if other := g.worktreeOf(branch); other != "" {
		if sameDir(other, g.top) {
			return nil, nil, fmt.Errorf("branch %s is checked out in the main checkout (%s): choose another branch with --branch", branch, other)
		}
		if owner := worktreeOwner(projectRoot, w, other); owner != nil {
			if _, held := lockHolder(owner); held {
				return nil, nil, fmt.Errorf("branch %s is the branch of workspace %s, whose run works on it now in %s: choose another with --branch", branch, owner.Name, other)
			}
			return nil, nil, fmt.Errorf("branch %s is the branch of workspace %s (its worktree %s): choose another with --branch, or free it with 'claude-iterate clean %s' once its work is merged (clean keeps the branch)", branch, owner.Name, other, owner.Name)
		}
		return nil, nil, fmt.Errorf("branch %s is checked out in %s: choose another with --branch, or free it ('git worktree remove %s')", branch, other, other)
	}
	st := &gitState{Worktree: dir, Branch: branch}
	exists := g.branchExists(branch)
	base := req.base
	switch {
	case exists && base != "":
		return nil, nil, fmt.Errorf("branch %s exists already: --base names a new branch's start; leave it out to work on %s, or choose a new branch with --branch", branch, branch)
	case base == "":
		head, _, err := gitOut(projectRoot, nil, "symbolic-ref", "-q", "--short", "HEAD")
		if (err != nil || head == "") && !exists {
			return nil, nil, errors.New("HEAD is detached: name the branch or commit to start from with --base REF")
		}
		base = head
		if !exists && !g.hasCommit() {
			return nil, nil, errors.New("the repository has no commit yet: commit once first, then run again")
		}
	}
	if exists {
		// A branch kept from before (clean without --delete-branch): its
		// base is what it was made from, when the metadata knew it.
		if old := w.meta.Git; old != nil {
			st.Base, st.BaseCommit = old.Base, old.BaseCommit
		} else {
			st.Base = base
		}
	} else {
		sha, _, err := gitOut(projectRoot, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}")
		if err != nil || sha == "" {
			if !g.hasCommit() {
				return nil, nil, fmt.Errorf("--base %s is not a commit of this repository, which has no commit yet: commit once first, then run again", base)
			}
			return nil, nil, fmt.Errorf("--base %s is not a commit of this repository: name a branch, tag or commit", base)
		}
		st.BaseCommit = sha
		if g.branchExists(base) {
			st.Base = base
		}
	}
	if err := excludeWorktrees(g, projectRoot); err != nil {
		req.warn("%v", err)
	}
	if err := makeDirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, nil, fmt.Errorf("making %s: %w", filepath.Dir(dir), unwrapPathError(err))
	}
	args := []string{"worktree", "add", "--quiet", dir, branch}
	if !exists {
		args = []string{"worktree", "add", "--quiet", "-b", branch, dir, st.BaseCommit}
	}
	err = g.gitLocked(func() error {
		_, stderr, err := gitOut(g.top, nil, args...)
		if err != nil { // the lock is still held: what is at dir is the add's (gitundo.go)
			return fmt.Errorf("git worktree add %s failed: %s; %s", dir, gitFailure(stderr, err), g.undoWorktreeAdd(dir, branch, st.BaseCommit, !exists && !strings.Contains(stderr, "already exists")))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Lstat(filepath.Join(dir, ".gitmodules")); err == nil {
		req.warn("the repository has submodules: they are not checked out in the worktree %s (to have them: git -C %s submodule update --init)", dir, dir)
	}
	w.meta.Git = st
	return g, st, nil
}

// excludeWorktrees keeps the worktrees' directory out of the main
// checkout's git status, in the repository's info/exclude.
func excludeWorktrees(g *gitRepo, projectRoot string) error {
	real, err := filepath.EvalSymlinks(projectRoot)
	if err != nil {
		real = projectRoot
	}
	rel, err := filepath.Rel(g.top, filepath.Join(real, filepath.FromSlash(worktreesDirName)))
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil // outside the checkout: nothing of it to hide
	}
	exclude := filepath.Join(g.common, "info", "exclude")
	if err := makeDirAll(filepath.Dir(exclude), 0o755); err != nil {
		return fmt.Errorf("keeping the worktrees out of git: making %s: %w", filepath.Dir(exclude), unwrapPathError(err))
	}
	line := "/" + filepath.ToSlash(rel) + "/"
	if err := addExcludeLines(exclude, "# claude-iterate: the workspaces' worktrees in "+line, []string{line}); err != nil {
		return fmt.Errorf("keeping the worktrees out of git: %s: %w", exclude, unwrapPathError(err))
	}
	return nil
}

// shortSHA is a commit's abbreviation.
func shortSHA(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

// workRoot is the project root the agent works in: its worktree's, with
// one, else the project's.
func (r *runPlan) workRoot() string {
	if r.gitSetup != nil && r.gitSetup.workRoot != "" {
		return r.gitSetup.workRoot
	}
	return r.env.projectRoot
}
