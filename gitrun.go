package main

// This file sets a run's git work up: the worktree (gitworktree.go) and
// the commits (gitcommit.go). The rules are: git.worktree (run/init
// --worktree) or a worktree made by an earlier run (unless git.worktree is
// set false) puts the agent in the workspace's worktree; git.commit commits each iteration there unless it
// is false, and on the project's checkout only when it is set true
// (--commit); --branch and --base without a worktree are refused, never
// ignored; a dry run, whose mock agent works on a scratch copy, makes no
// worktree and no commit, and says so.

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// setupGit readies the worktree and the commits, before the agent's
// command line is built: its project root is the worktree's. It returns
// nil when the run does neither.
func setupGit(env *cliEnv, cfg *settings, opts *runOptions, ws *workspace, con *console) (*runGitSetup, error) {
	// A workspace that has a worktree keeps working in it, unless
	// git.worktree is set false.
	worktree := cfg.GitWorktree || (cfg.isDefault("git.worktree") && ws.meta.Git != nil && ws.meta.Git.Worktree != "")
	commit := cfg.GitCommit && (worktree || !cfg.isDefault("git.commit"))
	if !worktree && (opts.branch.set || opts.base.set) {
		return nil, usagef("--branch and --base name the worktree's branch: add --worktree")
	}
	if !worktree && !commit {
		return nil, nil
	}
	if opts.dryRun {
		con.noticef("dry run: no git worktree and no commits (the mock agent works on a scratch copy)")
		return nil, nil
	}
	if ws.Ralph && worktree {
		return nil, errors.New("--worktree needs a workspace, and ralph mode runs in the current directory: make one with 'claude-iterate init <name>', or run without --worktree")
	}
	if err := excludeHazard(env.projectRoot, ws.Dir, ws.StateDir); err != nil {
		return nil, err
	}
	s := &runGitSetup{commit: commit, con: con, ws: ws, root: env.projectRoot}
	if worktree {
		warn := func(format string, args ...any) { con.errorf("warning: "+format, args...) }
		g, st, err := ensureWorktree(env.projectRoot, ws, worktreeRequest{branch: opts.branch.s, base: opts.base.s, from: worktreeSource(cfg, ws), warn: warn})
		if err != nil {
			return nil, err
		}
		s.repo, s.state = g, st
		s.workRoot = filepath.Join(st.Worktree, relInRepo(g, env.projectRoot))
		con.progressf("Working in the worktree %s, on branch %s", relPath(env.projectRoot, st.Worktree), st.Branch)
		if opts.given["commit"] && opts.commit && !opts.given["worktree"] { // --help: --commit is "without a worktree"
			con.noticef("--commit commits in workspace %s's worktree, where its runs work: for the main checkout, run with --no-worktree", ws.Name)
		}
	} else {
		if err := checkGitVersion(); err != nil {
			return nil, err
		}
		g, err := openGitRepo(env.projectRoot, "--commit")
		if err != nil {
			return nil, err
		}
		s.repo = g
	}
	dir := firstNonEmpty(s.workRoot, env.projectRoot)
	gitDir, stderr, err := gitOut(dir, nil, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return nil, fmt.Errorf("git rev-parse in %s failed: %s", dir, gitFailure(stderr, err))
	}
	s.gitDir = gitDir
	if commit {
		s.identity = gitIdentity(dir)
	}
	return s, nil
}

// worktreeSource says where a run's worktree comes from when no flag asked
// for it, for the errors that would otherwise name --worktree: "" for the
// flag.
func worktreeSource(cfg *settings, ws *workspace) string {
	switch src := cfg.sources["git.worktree"]; src {
	case layerFlag:
		return ""
	case layerWorkspace:
		return "git.worktree is set for this workspace (init --worktree)"
	case layerDefault:
		return fmt.Sprintf("workspace %s works in a worktree since an earlier run", ws.Name)
	default:
		for _, l := range cfg.layers {
			if l.name == src && l.path != "" {
				return "git.worktree is set in " + l.path
			}
		}
		return "git.worktree is set in the " + src + " configuration"
	}
}

// relInRepo is path relative to the repository's top, "." when it is
// not below it.
func relInRepo(g *gitRepo, path string) string {
	path = realPath(path)
	rel, err := filepath.Rel(g.top, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "."
	}
	return rel
}

// excludes adds to the workspace's own directories their places in the
// worktree: a workspace whose files are tracked has a copy there, which is
// not the agent's work either.
func (s *runGitSetup) excludes(dirs []string) []string {
	if s == nil || s.state == nil {
		return dirs
	}
	out := dirs
	for _, d := range dirs {
		if rel := relInRepo(s.repo, d); rel != "." {
			out = append(out, filepath.Join(s.state.Worktree, rel))
		}
	}
	return out
}

// startGitWork finds the work tree the iterations are scanned in (nil
// outside one), and commits what an earlier run left uncommitted in the
// worktree. reuse: the scan that ends an iteration may start the next one
// (nothing but the loop writes between them).
func startGitWork(s *runGitSetup, root string, exclude []string, reuse bool, con *console, log *runLog, prev, this string) *gitTree {
	g := findGitTree(root, s.excludes(exclude)...)
	if g == nil {
		return nil
	}
	g.warn = func(msg string) { con.errorf("warning: %s", msg); log.printf("WARNING: %s", msg) }
	g.note = func(msg string) { con.noticef("%s", msg); log.printf("[%s]", msg) }
	g.commits = s != nil && s.commit
	g.reuse = reuse
	if err := excludeHazard(g.top, exclude...); err != nil { // gitexclude.go
		g.failed = true
		g.warn(err.Error() + " (this run lists no changed files)")
	}
	if s == nil {
		return g
	}
	if s.state != nil {
		g.env = []string{"GIT_DIR=" + s.gitDir, "GIT_WORK_TREE=" + g.top}
	}
	s.log = log
	if s.state != nil {
		log.printf("Worktree: %s (branch %s, from %s)", s.state.Worktree, s.state.Branch, firstNonEmpty(s.state.Base, shortSHA(s.state.BaseCommit)))
	}
	if s.commit {
		who := ""
		if s.identity != nil {
			who = " (as claude-iterate: the repository names no user)"
		}
		log.printf("Commits: one per iteration that leaves changes%s", who)
	}
	s.recoverLeftovers(g, firstNonEmpty(prev, this))
	if s.commit {
		s.maintain(g) // gitcommit.go: once, instead of after each commit
	}
	return g
}

// scanReuse reports whether the scan that ends an iteration may start the
// next: not when a custom_script condition or the verifier may write
// between them.
func scanReuse(stops *stopSet, verifier *verifier) bool {
	reuse := verifier == nil
	for _, gc := range stops.ordered {
		gc.c.walk(func(c *condition) {
			if c.Type == condCustomScript {
				reuse = false
			}
		})
	}
	return reuse
}

// worktreeRoot is the project root the verify command's agent looks at:
// the worktree's, for a workspace that works in one that is there, else
// the project's. A path that is no longer the worktree (a link to the main
// checkout, say: gitworktreecheck.go) is refused, never looked at.
func worktreeRoot(env *cliEnv, w *workspace) (string, error) {
	st := w.meta.Git
	if st == nil || st.Worktree == "" {
		return env.projectRoot, nil
	}
	out, err := runGit(env.projectRoot, "rev-parse", "--show-toplevel", "--git-common-dir")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 2 {
		return env.projectRoot, nil
	}
	if f := checkWorktree(joinIfRelative(env.projectRoot, lines[1]), env.projectRoot, w.Name, st); f != nil && f.missing {
		return env.projectRoot, nil
	} else if f != nil && f.broken {
		return "", f
	}
	repoTop := lines[0]
	repoTop = realPath(repoTop)
	top := st.Worktree
	top = realPath(top)
	return filepath.Join(top, relInRepo(&gitRepo{top: repoTop}, env.projectRoot)), nil
}

// agentArgs are the agent's arguments a worktree needs: the workspace's
// directory, outside the worktree the agent works in, is one it may edit
// (its .status.json and TODO.md), as claude's --add-dir allows.
func (s *runGitSetup) agentArgs(ws *workspace) []string {
	if s == nil || s.state == nil {
		return nil
	}
	return []string{"--add-dir", ws.Dir}
}

// setGit is settings.set for the git keys.
func (s *settings) setGit(key string, v any) bool {
	switch key {
	case "git.worktree":
		s.GitWorktree = v.(bool)
	case "git.commit":
		s.GitCommit = v.(bool)
	default:
		return false
	}
	return true
}

// setupRefused ends a run refused for a usage or config fault (exit 2)
// before its first iteration: a refusal, as a bad flag's, not a run, so the
// metadata keeps the last run's ending (status, reason, exit status); it is
// saved only for a worktree the set-up made, which it must not lose.
func setupRefused(r *runner) {
	if r.lock != nil && r.ws != nil && r.ws.meta != nil && r.gitSetup != nil && r.gitSetup.state != nil {
		if err := r.ws.save(); err != nil && !isGone(err) {
			fmt.Fprintf(r.env.stderr, "%s: warning: saving %s: %v\n", progName, r.ws.metadataPath(), unwrapPathError(err))
		}
	}
}
