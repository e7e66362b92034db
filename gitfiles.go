package main

// This file finds the project files an iteration added, changed or
// removed, when the project root is in a git work tree. The rules are:
//
//   - Outside a git work tree nothing runs: the work tree is looked for by
//     walking up to a .git entry, without starting git.
//   - Around each iteration, one `git status` (porcelain v2, untracked
//     files listed one by one, no renames, no ahead/behind count against
//     an upstream — a walk of history nothing here reads —, no optional
//     locks — the agent's own git commands must never find index.lock
//     taken) lists the dirty files, how a commit stages each (stageWayOf)
//     and HEAD; each dirty file is stamped (statuswatch.go's fileStamp). A file is changed when it is dirty on one side only, or
//     its stamp differs; when HEAD moved (the agent committed), the files
//     of `git diff old new` are added. A file dirty before whose stamp is
//     the same after is not changed, whatever git says of it: committing
//     an earlier edit is not changing the file.
//   - Each git command is bounded in time; its whole process group is
//     killed at the bound. A git that fails turns the feature off for the
//     rest of the run, with one warning: filesChanged is then null, never
//     a guess. One that waits on a file (a named pipe read as a
//     .gitignore) is paused while the file is there (gitstall.go).
//   - Paths are relative to the project root; files outside it and the
//     workspace's own files are left out.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// gitTree is the git work tree around a project root.
type gitTree struct {
	top     string   // the work tree's top directory
	root    string   // the project root
	exclude []string // directories whose files are never listed (the workspace's)
	failed  bool
	// next is the scan that ended the last iteration, for the next one's
	// start when nothing ran in between (gitcommit.go); reuse allows it.
	next  *gitSnapshot
	reuse bool
	// env pins git to the work tree and its git directory (a worktree's:
	// gitcommit.go), so that a .git an agent deleted can never send the
	// scans and commits to the checkout around it.
	env []string
	// warn says, once, that git failed and filesChanged is off; note says
	// that it works again (gitstall.go).
	warn, note func(msg string)
	// commits: the run commits each iteration, which a git status that
	// cannot run stops too.
	commits bool
	// stuck is the file git status was found waiting on, pause why git
	// does not run now; timedOut: the last git status that ran timed out
	// with no such file found, so the next one failing ends git for the
	// run (gitstall.go). A pause, where git did not run, is not a failure.
	stuck, pause string
	timedOut     bool
}

// gitSnapshot is a work tree's dirty files and HEAD at one moment.
type gitSnapshot struct {
	head  string
	dirty map[string]fileStamp // by path relative to the top
	// how says how a commit takes a dirty path (gitcommit.go); a path it
	// does not name is a tracked file the index holds (stageUpdate).
	how map[string]stageWay
}

// stageWay is how a commit stages a dirty path.
type stageWay uint8

const (
	// stageUpdate: a tracked file the index holds; the commit itself
	// stages it (commit --include or --only), with no git add.
	stageUpdate stageWay = iota
	// stageAdd: untracked, unmerged, intent-to-add or a submodule's: git
	// add stages it first, as it would settle it by hand.
	stageAdd
	// stageDone: its deletion is staged already; git add would refuse it
	// (the index and the work tree both lack it).
	stageDone
)

// stageWayOf is how a commit stages the path of a porcelain v2 entry.
func stageWayOf(entry string) stageWay {
	if !strings.HasPrefix(entry, "1 ") {
		return stageAdd // "? ", "u ", "2 "
	}
	f := strings.SplitN(entry, " ", 4) // 1 XY sub ...
	switch {
	case len(f) < 4 || len(f[1]) != 2 || f[2] != "N...":
		return stageAdd
	case f[1][0] == 'D':
		return stageDone
	case f[1][1] == 'A':
		return stageAdd // intent-to-add
	}
	return stageUpdate
}

// findGitTree returns the git work tree holding root, or nil when there is
// none (or git cannot say where it is).
func findGitTree(root string, exclude ...string) *gitTree {
	found := false
	for dir := root; ; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			found = true
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if !found {
		return nil
	}
	out, err := runGit(root, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil
	}
	top := strings.TrimSpace(string(out))
	if top == "" {
		return nil
	}
	top = realPath(top)
	root = realPath(root)
	g := &gitTree{top: top, root: root}
	for _, e := range exclude {
		if e == "" {
			continue
		}
		e = realPath(e)
		g.exclude = append(g.exclude, e)
	}
	return g
}

// runGit runs git in dir, bounded by gitTimeout, and returns its stdout.
func runGit(dir string, args ...string) ([]byte, error) {
	return runGitEnv(dir, nil, args...)
}

// runGitEnv is runGit with more environment variables.
func runGitEnv(dir string, env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out, err := outputOwn(cmd)
	if ctx.Err() != nil {
		return nil, gitStalled("git "+gitVerb(args), dir)
	}
	return out, err
}

// snapshot lists the dirty files now; nil when g is nil or git failed.
func (g *gitTree) snapshot() *gitSnapshot {
	if g == nil || g.failed {
		return nil
	}
	if why := g.gitBlocked(); why != "" { // gitstall.go: no wait on a file git hangs on
		g.paused(why)
		return nil
	}
	out, err := runGitEnv(g.top, g.env, "status", "--porcelain=v2", "--branch", "--no-ahead-behind", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=dirty")
	if err != nil {
		g.scanFailed(err)
		return nil
	}
	g.scanned()
	s := &gitSnapshot{dirty: map[string]fileStamp{}}
	for _, entry := range bytes.Split(out, []byte{0}) {
		line := string(entry)
		var path string
		switch {
		case strings.HasPrefix(line, "# branch.oid "):
			s.head = strings.TrimPrefix(line, "# branch.oid ")
			continue
		case strings.HasPrefix(line, "1 "):
			path = nthField(line, 8)
		case strings.HasPrefix(line, "2 "):
			path = nthField(line, 9)
		case strings.HasPrefix(line, "u "):
			path = nthField(line, 10)
		case strings.HasPrefix(line, "? "):
			path = line[2:]
		}
		if path != "" {
			s.dirty[path] = stampOf(filepath.Join(g.top, path))
			// Untracked entries come last: a path deleted in the index
			// and made again in the work tree ends as one to add.
			if way := stageWayOf(line); way != stageUpdate {
				if s.how == nil {
					s.how = map[string]stageWay{}
				}
				s.how[path] = way
			} else {
				delete(s.how, path)
			}
		}
	}
	return s
}

// start is the scan an iteration starts from: the one that ended the
// last iteration, when it may serve, else a new one.
func (g *gitTree) start() *gitSnapshot {
	if g == nil {
		return nil
	}
	s := g.next
	g.next = nil
	if s != nil && g.reuse && !g.failed {
		return s
	}
	return g.snapshot()
}

// nthField returns what follows the first n space-separated fields of line.
func nthField(line string, n int) string {
	for range n {
		i := strings.IndexByte(line, ' ')
		if i < 0 {
			return ""
		}
		line = line[i+1:]
	}
	return line
}

// changed lists the project files that changed between before and after,
// relative to the project root; nil when either is unknown.
func (g *gitTree) changed(before, after *gitSnapshot) []string {
	if g == nil || before == nil || after == nil {
		return nil
	}
	set := map[string]bool{}
	for p, st := range before.dirty {
		if st2, ok := after.dirty[p]; !ok || st2 != st {
			set[p] = true
		}
	}
	for p := range after.dirty {
		if _, ok := before.dirty[p]; !ok {
			set[p] = true
		}
	}
	if before.head != after.head && before.head != "" && after.head != "" && !strings.HasPrefix(before.head, "(") {
		out, err := runGitEnv(g.top, g.env, "diff", "--name-only", "-z", "--no-renames", before.head, after.head)
		if err == nil {
			for _, p := range bytes.Split(out, []byte{0}) {
				if len(p) > 0 {
					set[string(p)] = true
				}
			}
		}
	}
	files := []string{}
	for p := range set {
		abs := filepath.Join(g.top, p)
		if g.excluded(abs) || sameSince(before, after, p, abs) {
			continue
		}
		rel, err := filepath.Rel(g.root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		files = append(files, rel)
	}
	slices.Sort(files)
	return files
}

// sameSince reports whether the file p (at abs) was dirty before and is
// as it was then: an iteration that only commits it (or leaves it as it
// was) did not change it, though it leaves the dirty list or appears in
// the commits' diff.
func sameSince(before, after *gitSnapshot, p, abs string) bool {
	was, ok := before.dirty[p]
	if !ok {
		return false
	}
	now, ok := after.dirty[p]
	if !ok {
		now = stampOf(abs)
	}
	return now == was
}

// excluded reports whether abs is one of the workspace's own files.
func (g *gitTree) excluded(abs string) bool {
	for _, e := range g.exclude {
		if abs == e || strings.HasPrefix(abs, e+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// gitBlocked says why git status must not run in g now (stats only): the
// file an earlier scan found git waiting on is there still, or an exclude
// file gitexclude.go names is one git would wait on; "" when none is.
func (g *gitTree) gitBlocked() string {
	if g.stuck != "" {
		if fi, err := os.Lstat(g.stuck); err == nil && hangsGit(fi.Mode()) {
			return stallText(g.stuck, fileKind(fi))
		}
		g.stuck = ""
	}
	if err := excludeHazard(g.top, g.exclude...); err != nil {
		return strings.TrimSuffix(err.Error(), ", then run again") // it is tried again
	}
	return ""
}

// stopsWhat is what a git status that cannot run stops: the changed files
// of the history, and the commits of a run that commits.
func (g *gitTree) stopsWhat() string {
	if g.commits {
		return "the iterations are not committed and the history lists no changed files"
	}
	return "the history lists no changed files"
}

// paused notes that git status cannot run now, for why: said once per
// cause; git is tried again at the next scan.
func (g *gitTree) paused(why string) {
	if why != g.pause && g.warn != nil {
		g.warn(fmt.Sprintf("git cannot run in %s: %s; until then %s (git is tried again after each iteration)", g.top, why, g.stopsWhat()))
	}
	g.pause = why
}

// scanFailed handles a git status that failed with err: paused while a
// file it waits on is found, else tried once more, then given up for the
// rest of the run.
func (g *gitTree) scanFailed(err error) {
	var st *gitStallError
	if errors.As(err, &st) && st.path != "" {
		g.stuck = st.path
		g.paused(fmt.Sprintf("git did not answer within %s: %s", gitTimeout, st.why))
		return
	}
	if st != nil && !g.timedOut {
		g.timedOut = true
		g.paused(err.Error())
		return
	}
	g.failed = true
	if g.warn != nil {
		g.warn(fmt.Sprintf("git status failed in %s (%v): %s for the rest of this run", g.top, err, g.stopsWhat()))
	}
}

// scanned notes that git status answered: after a pause, the run says the
// work goes on.
func (g *gitTree) scanned() {
	if g.pause != "" && g.note != nil {
		what := "the history lists changed files again"
		if g.commits {
			what = "the commits resume"
		}
		g.note(fmt.Sprintf("git answers again in %s: %s", g.top, what))
	}
	g.pause, g.timedOut = "", false
}

// stalledOn notes the file a git command of the run (a commit's git add)
// was found waiting on, if err names one: the scans do not run git while
// it is there (gitBlocked).
func (g *gitTree) stalledOn(err error) {
	var st *gitStallError
	if errors.As(err, &st) && st.path != "" {
		g.stuck = st.path
	}
}
