package main

// This file commits each iteration's work (with a worktree, or --commit).
// The rules are:
//
//   - An iteration that leaves files changed ends with one commit: with a
//     worktree, of every change left in it (the worktree is the
//     workspace's own); on the project's checkout (--commit alone), of the
//     files the iteration changed only, never the user's other edits. The
//     commit takes those paths only: a change someone staged stays staged.
//   - The commit stages the files the index holds itself (--include in a
//     worktree, --only on the checkout); only the paths it cannot stage
//     (new files, unmerged, intent-to-add, a submodule's) get a git add
//     first, and a deletion the agent staged (git rm) needs neither: the
//     usual iteration, that edits files, costs one git status, one git
//     commit and, in a worktree, a git rev-parse that reads no index
//     (commitHooks), not a git add that reads and writes all of it
//     (issue 30: 60 ms on 10,000 files). In a worktree whose
//     repository has commit hooks, or when git add runs anyway, git add
//     stages every path and the commit takes the index as it is, as
//     before: the hooks see the index itself, never the lock file of
//     commit --include.
//   - The paths come from the iteration's ending status scan (gitfiles.go),
//     which then serves as the next iteration's starting one: one scan per
//     iteration. Ignored files are never listed; the workspace's own files
//     are left out (gitTree.exclude).
//   - The agent's own commits are kept as they are: the tool commits what
//     is left on top of them.
//   - Subject: the workspace, the iteration and what the agent said it did
//     (.status.json's summary, else the first line of its result); body:
//     the record's duration, cost and tools; trailers Claude-Iterate-Run and
//     Claude-Iterate-Iteration.
//   - A commit that fails (a pre-commit hook, say) leaves the changes where
//     they are — nothing is reset or stashed — and says why once, in the
//     console, the log and the record (commitError); the record's commit is
//     then null. The next run commits them as recovered.
//   - git's automatic maintenance (gc --auto) runs once as a run that
//     commits starts, not after each of its commits (noAutoMaintenance):
//     one git process fewer per iteration.
//   - A repository with no identity configured commits as claude-iterate
//     <claude-iterate@localhost> through git -c; the user's configuration is
//     never changed.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// fallbackIdentity is the committer of a repository that has none.
var fallbackIdentity = []string{"-c", "user.name=claude-iterate", "-c", "user.email=claude-iterate@localhost"}

// runGitSetup is a run's git work beyond filesChanged.
type runGitSetup struct {
	repo     *gitRepo
	state    *gitState // the worktree and its branch; nil on the project's checkout
	workRoot string    // the project root in the worktree; "" without one
	gitDir   string    // the worktree's git directory
	commit   bool      // commit per iteration
	identity []string  // fallbackIdentity when the repository has none
	ws       *workspace
	con      *console
	log      *runLog
	left     *agentLeft // the user's checkout: what is whose (gitmine.go)
	// bigWarned: the files over bigFileWarn already named (gitmine.go)
	bigWarned map[string]bool
	root      string         // the project's root, for the paths shown
	stray     *worktreeFault // the worktree left its branch (gitworktreecheck.go)
	// dotGitTold: the worktree's .git was found broken, and said so
	dotGitTold bool
}

// gitIdentity returns the -c options a commit in dir needs: none when git
// knows who commits.
func gitIdentity(dir string) []string {
	if _, _, err := gitOut(dir, nil, "var", "GIT_COMMITTER_IDENT"); err != nil {
		return fallbackIdentity
	}
	if _, _, err := gitOut(dir, nil, "var", "GIT_AUTHOR_IDENT"); err != nil {
		return fallbackIdentity
	}
	return nil
}

// commitPaths are the paths (relative to the top) a commit after the
// iteration takes: every dirty one (all), or those the iteration changed.
func (g *gitTree) commitPaths(before, after *gitSnapshot, all bool) []string {
	if g == nil || after == nil {
		return nil
	}
	var paths []string
	for p := range after.dirty {
		abs := filepath.Join(g.top, p)
		if g.excluded(abs) {
			continue
		}
		if !all && (before == nil || sameSince(before, after, p, abs)) {
			continue
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// gitCommitResult is a commit's outcome.
type gitCommitResult struct {
	sha  string // the new commit; "" when none was made
	fail string // why it failed, "" when it did not
}

// commitPathsNow stages paths (of the scan snap) in the tree g and
// commits them with message. Only the paths the commit cannot stage
// itself (stageAdd: untracked ones, say) go through git add first; the
// edited and deleted files the index holds are staged by the commit
// (--include, --only): in the usual iteration, that only edits files, no
// git add reads and writes the whole index. The message loses its control
// characters (stripControls): git log prints it raw, and it quotes the
// agent and names the files it made.
func (s *runGitSetup) commitPathsNow(g *gitTree, snap *gitSnapshot, paths []string, message string) gitCommitResult {
	var res gitCommitResult
	message = stripControls(message)
	var add, update []string
	for _, p := range paths {
		switch snap.how[p] {
		case stageAdd:
			add = append(add, p)
		case stageUpdate:
			update = append(update, p)
		}
	}
	if s.state != nil && len(update) > 0 && (len(add) > 0 || commitHooks(g)) {
		// A worktree's hooks see its index as a plain git commit shows
		// it, not the lock file commit --include builds (a hook that runs
		// git add without GIT_INDEX_FILE would find it taken): git add
		// stages every path first. So it does when it runs anyway (new
		// files), which spares asking for the hooks.
		add, update = append(add, update...), nil
	}
	err := s.repo.gitLocked(func() error {
		if len(add) > 0 {
			started := time.Now()
			if _, stderr, err := gitRunWith(g.top, nulList(add), g.env, "--literal-pathspecs", "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
				res.fail = "git add failed: " + gitFailure(stderr, err)
				g.stalledOn(err) // gitstall.go
				dropKilledLock(s.gitDir, err, started)
				return nil
			}
		}
		args := append(slices.Clone(s.identity), noAutoMaintenance...)
		args = append(args, "--literal-pathspecs", "commit", "-q")
		for _, para := range strings.Split(strings.TrimSpace(message), "\n\n") {
			args = append(args, "-m", para)
		}
		var stdin []byte
		switch {
		case s.state == nil:
			// The user's checkout: these paths only (--only), so that a
			// change someone staged stays staged.
			args, stdin = append(args, "--pathspec-from-file=-", "--pathspec-file-nul"), nulList(paths)
		case len(update) > 0:
			// A worktree's index is the workspace's own, committed whole
			// (no second index to build), the files the index holds
			// staged on the way.
			args, stdin = append(args, "--include", "--pathspec-from-file=-", "--pathspec-file-nul"), nulList(update)
		}
		started := time.Now()
		if _, stderr, err := gitRunWith(g.top, stdin, g.env, args...); err != nil {
			res.fail = "git commit failed: " + commitFailure(stderr, err)
			g.stalledOn(err)
			dropKilledLock(s.gitDir, err, started)
			return nil
		}
		if res.sha = headSHA(s.gitDir, s.repo.common); res.sha != "" {
			return nil
		}
		sha, stderr, err := gitRunWith(g.top, nil, g.env, "rev-parse", "HEAD")
		if err != nil {
			res.fail = "git rev-parse HEAD failed after the commit: " + gitFailure(stderr, err)
			return nil
		}
		res.sha = sha
		return nil
	})
	if err != nil {
		res.fail = err.Error()
	}
	return res
}

// noAutoMaintenance keeps a commit from running git's automatic
// maintenance (git maintenance run --auto: gc --auto's check) after it, a
// process more per iteration; the run runs it once as it starts
// (maintain). A git older than 2.29, which has no maintenance.auto, runs
// gc --auto after each commit as before.
var noAutoMaintenance = []string{"-c", "maintenance.auto=false"}

// maintain runs the repository's automatic maintenance as a commit would
// (unless maintenance.auto is false), holding the repository's lock as a
// commit does; it fails as quietly as git's own.
func (s *runGitSetup) maintain(g *gitTree) {
	if on, _, _ := gitRunWith(g.top, nil, g.env, "config", "--type=bool", "maintenance.auto"); on == "false" {
		return
	}
	s.repo.gitLocked(func() error {
		gitRunWith(g.top, nil, g.env, "maintenance", "run", "--auto", "--quiet")
		return nil
	})
}

// commitHooks reports whether git may run a hook of its own around a
// commit in g (pre-commit, prepare-commit-msg, commit-msg, post-commit,
// post-index-change), where core.hooksPath or the repository says hooks
// are; true when git cannot say.
func commitHooks(g *gitTree) bool {
	dir, _, err := gitRunWith(g.top, nil, g.env, "rev-parse", "--git-path", "hooks")
	if err != nil || dir == "" {
		return true
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(g.top, dir)
	}
	for _, name := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-index-change"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// headSHA is the commit HEAD names in the git directory gitDir (common
// its common directory), read as git stores it, without starting git: a
// detached HEAD's sha, or its branch's loose ref; "" when the ref is
// packed, in another format, or not there (then git is asked).
func headSHA(gitDir, common string) string {
	if gitDir == "" || common == "" {
		return ""
	}
	data, err := readRegularFile(filepath.Join(gitDir, "HEAD"), 4096)
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(data))
	ref, symbolic := strings.CutPrefix(head, "ref: ")
	if !symbolic {
		return shaOrEmpty(head)
	}
	if !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return ""
	}
	data, err = readRegularFile(filepath.Join(common, filepath.FromSlash(ref)), 4096)
	if err != nil {
		return ""
	}
	return shaOrEmpty(strings.TrimSpace(string(data)))
}

// shaOrEmpty is s when it is a full object name (SHA-1 or SHA-256), else "".
func shaOrEmpty(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return s
}

// commitFailure says why git commit failed: a hook's last words, or git's.
func commitFailure(stderr string, err error) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return err.Error()
	}
	return clip(oneLine(strings.Join(lines[max(0, len(lines)-2):], "; ")), 300)
}

// commitMessage is an iteration's commit message.
func commitMessage(ws string, rec *iterationRecord, said string) string {
	subject := fmt.Sprintf("%s: iteration %d", ws, rec.Iteration)
	if said = strings.TrimSpace(oneLine(said)); said != "" {
		subject += ": " + said
	}
	subject = clip(subject, 100)
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	fmt.Fprintf(&b, "Duration: %s\n", roundDuration(rec.duration()))
	fmt.Fprintf(&b, "Cost: %s\n", costText(rec.CostUSD, rec.CostEstimated))
	if t := toolsText(rec, 0); t != "" {
		fmt.Fprintf(&b, "Tools: %s\n", t)
	} else {
		b.WriteString("Tools: none\n")
	}
	if rec.End != endDone {
		fmt.Fprintf(&b, "Ended: %s%s\n", rec.End, map[bool]string{true: " (" + oneLine(rec.Reason) + ")", false: ""}[rec.Reason != ""])
	}
	if len(rec.CommitLeftOut) > 0 {
		fmt.Fprintf(&b, "Left out (uncommitted changes from before the iteration): %s\n", strings.Join(rec.CommitLeftOut, ", "))
	}
	fmt.Fprintf(&b, "\nClaude-Iterate-Run: %s\nClaude-Iterate-Iteration: %d\n", rec.Run, rec.Iteration)
	return b.String()
}

// saidDone is what the agent said it did: the summary it wrote in the
// iteration, else the first line of its result.
func saidDone(ev *evidence, rec *iterationRecord) string {
	if ev != nil && ev.written && ev.status.Summary != "" {
		return ev.status.Summary
	}
	first, _, _ := strings.Cut(strings.TrimSpace(rec.resultText), "\n")
	return first
}

// afterIteration commits what the iteration left, sets the record's
// commit (and commitError), and readies the next iteration's starting
// scan in g.
func (s *runGitSetup) afterIteration(g *gitTree, rec *iterationRecord, ev *evidence, before, after *gitSnapshot) {
	if g == nil || strayed(s, g, rec, after) { // gitworktreecheck.go: on its branch still
		return
	}
	if s == nil || !s.commit {
		g.next = after
		return
	}
	if after == nil { // git failed: filesChanged is off, and so are the commits
		rec.Commit, rec.CommitError = json.RawMessage("null"), "git cannot run: "+firstNonEmpty(g.pause, "git status failed")
		s.con.noticef("iteration %d: not committed: git cannot run (said above); the changes stay in %s", rec.Iteration, g.top)
		s.log.printf("NOT COMMITTED: %s (the changes stay in %s)", rec.CommitError, g.top)
		return
	}
	paths := g.commitPaths(before, after, s.state != nil)
	if s.state == nil && before != nil {
		var leftOut []string
		paths, leftOut = s.ownPaths(before, after, paths)
		rec.CommitLeftOut = s.warnLeftOut(g, rec.Iteration, leftOut)
	}
	var res gitCommitResult
	if len(paths) > 0 {
		res = s.commitPathsNow(g, after, paths, commitMessage(s.ws.Name, rec, saidDone(ev, rec)))
	}
	switch {
	case res.sha != "":
		rec.Commit, _ = json.Marshal(res.sha)
		next := &gitSnapshot{head: res.sha, dirty: map[string]fileStamp{}, how: map[string]stageWay{}}
		for p, st := range after.dirty {
			if !slices.Contains(paths, p) {
				next.dirty[p] = st
				if way, ok := after.how[p]; ok {
					next.how[p] = way
				}
			}
		}
		g.next = next
		s.log.printf("Commit: %s (%s)", shortSHA(res.sha), plural(len(paths), "file"))
		s.warnBig(g, rec.Iteration, after, paths)
	case res.fail != "":
		rec.Commit, rec.CommitError = json.RawMessage("null"), res.fail
		s.con.noticef("iteration %d: not committed: %s; the changes stay in %s", rec.Iteration, res.fail, g.top)
		s.log.printf("COMMIT FAILED: %s (the changes stay in %s)", res.fail, g.top)
	case after.head != "" && before != nil && after.head != before.head:
		rec.Commit, _ = json.Marshal(after.head) // the agent committed everything itself
		g.next = after
	default:
		rec.Commit = json.RawMessage("null")
		g.next = after
	}
	if len(paths) > 0 {
		s.committed(after, paths, res.sha != "") // gitmine.go
	}
}

// endNote is what a run that commits says as it ends while git cannot
// run in g (gitstall.go): its last changes are not committed, and where
// they stay; "" when git runs.
func (s *runGitSetup) endNote(g *gitTree) string {
	if s == nil || !s.commit || g == nil || (g.pause == "" && !g.failed) {
		return ""
	}
	then := "they stay there"
	if s.state != nil {
		then = "the next run commits them first, once git runs there again"
	}
	return fmt.Sprintf("the run ends with changes not committed in %s (git cannot run there, said above): %s", g.top, then)
}

// recoverLeftovers commits, before the first iteration, the changes an
// earlier run left uncommitted in the worktree (a kill -9 mid-iteration, a
// failed commit), as a recovered iteration, and says so.
func (s *runGitSetup) recoverLeftovers(g *gitTree, run string) {
	if !s.commit || s.state == nil {
		return
	}
	snap := g.snapshot()
	paths := g.commitPaths(nil, snap, true)
	if len(paths) == 0 {
		g.next = snap
		return
	}
	n := 0 // the earlier run's last iteration, as its records number it
	eachRecord(s.ws.historyPath(), func(rec *iterationRecord) {
		if rec.Run == run && rec.counted() {
			n = max(n, rec.Iteration)
		}
	})
	msg := fmt.Sprintf("%s: recovered changes an earlier run left uncommitted after iteration %d\n\n"+
		"The run ended (killed, or its commit failed) before committing them:\n%s\n"+
		"\nClaude-Iterate-Run: %s\nClaude-Iterate-Iteration: %d\n", s.ws.Name, n, listForMessage(paths), run, n)
	res := s.commitPathsNow(g, snap, paths, msg)
	if res.fail != "" {
		s.con.noticef("warning: %s left uncommitted by an earlier run in %s: not committed: %s", plural(len(paths), "file"), g.top, res.fail)
		s.log.printf("RECOVERY COMMIT FAILED: %s", res.fail)
		return
	}
	say := fmt.Sprintf("recovered %s an earlier run left uncommitted in %s: commit %s", plural(len(paths), "file"), g.top, shortSHA(res.sha))
	s.con.noticef("%s", say)
	s.log.printf("[%s]", say)
}

// nulList is paths for --pathspec-file-nul.
func nulList(paths []string) []byte {
	return []byte(strings.Join(paths, "\x00"))
}

// listForMessage lists paths for a commit message, at most 20.
func listForMessage(paths []string) string {
	var b strings.Builder
	for i, p := range paths {
		if i == 20 {
			fmt.Fprintf(&b, "  … and %d more\n", len(paths)-20)
			break
		}
		b.WriteString("  " + p + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
