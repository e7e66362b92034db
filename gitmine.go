package main

// This file keeps the user's own edits out of the commits --commit makes
// on the user's checkout (without a worktree). The rules are:
//
//   - A file that was dirty (modified, staged or untracked) when an
//     iteration started is the user's: it is left out of the iteration's
//     commit even when the agent changed it, since its change cannot be
//     split from the user's. Each such file is named once per run in a
//     warning (console and log); every record whose commit left files out
//     names them (commitLeftOut), and so does the commit's message.
//   - The exception is the agent's own change a failed commit (a
//     pre-commit hook) left in this run: a file the agent changed in an
//     earlier iteration, still as the agent left it, is the agent's. The
//     next commit of the run takes it, whether or not its iteration
//     touched it again. A file someone changed after the agent did (its
//     stamp moved between the iterations) is the user's again.
//   - A file dirty before the run is the user's for the whole run. A file
//     the user starts editing between two iterations is the user's too,
//     when the next iteration's starting scan sees it (a reused scan does
//     not: nothing but the loop is meant to write between iterations).
//   - A worktree is the workspace's own: its commits take every change.
//   - Any commit of an iteration (worktree or not) that takes a file over
//     bigFileWarn names it in a warning, once per file per run: git keeps
//     it in the history for good. The commit is made all the same. A
//     symbolic link is not the file it points at, and is not named.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// agentLeft is what the agent changed on the user's checkout and a failed
// commit left uncommitted, as it was then; warned: the user's files
// already named in a warning in this run.
type agentLeft struct {
	files  map[string]fileStamp
	warned map[string]bool
}

// ownPaths splits the paths a commit on the user's checkout would take
// into the agent's (take) and the user's (left out), adding the agent's
// changes a failed commit left; both are relative to the top.
func (s *runGitSetup) ownPaths(before, after *gitSnapshot, paths []string) (take, leftOut []string) {
	if s.left == nil {
		s.left = &agentLeft{files: map[string]fileStamp{}, warned: map[string]bool{}}
	}
	for p := range s.left.files {
		if _, dirty := after.dirty[p]; !dirty {
			delete(s.left.files, p) // committed or undone by the agent
		} else if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		was, dirty := before.dirty[p]
		if left, ok := s.left.files[p]; dirty && (!ok || left != was) {
			leftOut = append(leftOut, p)
			continue
		}
		take = append(take, p)
	}
	return take, leftOut
}

// committed notes a commit's outcome: the paths it took are no longer
// the agent's leftovers, or, when it failed, they all are (as after has
// them).
func (s *runGitSetup) committed(after *gitSnapshot, paths []string, ok bool) {
	if s.left == nil {
		return
	}
	for _, p := range paths {
		if ok {
			delete(s.left.files, p)
		} else if st, dirty := after.dirty[p]; dirty {
			s.left.files[p] = st
		}
	}
}

// warnLeftOut names, once per run, each of the user's files an
// iteration's commit left out, and returns them as the record names files
// (relative to the project root).
func (s *runGitSetup) warnLeftOut(g *gitTree, iteration int, leftOut []string) []string {
	var names []string
	for _, p := range leftOut {
		name := g.projectPath(p)
		names = append(names, name)
		if s.left.warned[p] {
			continue
		}
		s.left.warned[p] = true
		msg := fmt.Sprintf("%s had uncommitted changes of yours before iteration %d: left out of the iteration's commit", name, iteration)
		s.con.errorf("warning: %s", msg)
		s.log.printf("WARNING: %s", msg)
	}
	return names
}

// projectPath is p (relative to the top) relative to the project root,
// as filesChanged names files; p itself when it is outside the root.
func (g *gitTree) projectPath(p string) string {
	rel, err := filepath.Rel(g.root, filepath.Join(g.top, p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}

// bigFileWarn is the size over which a file an iteration commits is named
// in a warning (gitmine.go's rules).
const bigFileWarn = 50 << 20

// warnBig names, once per file per run, each of the paths (relative to the
// top) the iteration's commit took that is over bigFileWarn.
func (s *runGitSetup) warnBig(g *gitTree, iteration int, after *gitSnapshot, paths []string) {
	for _, p := range paths {
		if st := after.dirty[p]; st.size <= bigFileWarn || s.bigWarned[p] {
			continue
		}
		fi, err := os.Lstat(filepath.Join(g.top, p)) // the stamp follows links
		if err != nil || !fi.Mode().IsRegular() || fi.Size() <= bigFileWarn {
			continue
		}
		if s.bigWarned == nil {
			s.bigWarned = map[string]bool{}
		}
		s.bigWarned[p] = true
		msg := fmt.Sprintf("iteration %d's commit adds %s, %s (over %s): git keeps it in the branch's history for good; if it should not be there, add it to .gitignore and take it out of the branch before you merge it",
			iteration, g.projectPath(p), byteSize(fi.Size()), fmt.Sprintf("%d MiB", bigFileWarn>>20))
		s.con.errorf("warning: %s", msg)
		s.log.printf("WARNING: %s", msg)
	}
}
