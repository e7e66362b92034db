package main

// This file keeps git from hanging on the exclude files it reads. git
// status, git worktree add and the commits read the repository's
// info/exclude, the user's global excludes file and every .gitignore on
// the way; one that is a named pipe makes git wait forever (for a writer
// that never comes), a device or a huge file makes it read without end.
// The rules are:
//
//   - Before the tool's git commands read them, the exclude files it can
//     name without starting git are looked at (stat only): the
//     repository's info/exclude, $XDG_CONFIG_HOME/git/ignore (git's
//     default global excludes file; a core.excludesFile set elsewhere is
//     not looked for), and the .gitignore of the project root, the
//     workspace's directories and each directory above them up to the
//     work tree's top, and the .gitignore files the tool writes in the
//     projects around those directories (toolGitignoreDirs: every
//     workspace's, ralph mode's), so that one workspace's bad .gitignore
//     stalls no run of another. The other .gitignore files deeper in the
//     tree are not: walking the tree per run would cost more than git's
//     own scan.
//   - One that is a named pipe, a device or a socket, or bigger than
//     excludeFileCap, stops the run's git work with one line naming it,
//     what it is and how to fix it: --worktree and --commit are refused
//     (gitrun.go's setupGit); a run without them lists no changed files
//     (the history's filesChanged is null), with a warning; merge, pr and
//     clean refuse; status, list and history show it as the branch's git
//     error.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// excludeFileCap is the largest exclude file git is let read: a real one
// is a few kilobytes.
const excludeFileCap = 32 << 20

// excludeHazard looks at the exclude files git would read in the work
// tree holding root (found by its .git entry, without starting git), and
// returns the error naming the first git would hang on; nil when there is
// none, or no work tree. dirs are more directories (the workspace's) whose
// .gitignore git reads; the tool's own .gitignore files in the projects
// around root and dirs are looked at too.
func excludeHazard(root string, dirs ...string) error {
	top, dotGit := findDotGit(root)
	if top == "" {
		return nil
	}
	common := gitCommonDirOf(dotGit)
	type file struct{ path, role string }
	var files []file
	if common != "" {
		files = append(files, file{filepath.Join(common, "info", "exclude"), "the repository's exclude file"})
	}
	if cfg := os.Getenv("XDG_CONFIG_HOME"); cfg != "" {
		files = append(files, file{filepath.Join(cfg, "git", "ignore"), "your global excludes file"})
	} else if home, err := os.UserHomeDir(); err == nil {
		files = append(files, file{filepath.Join(home, ".config", "git", "ignore"), "your global excludes file"})
	}
	seen := map[string]bool{}
	dirs = append([]string{root}, dirs...)
	dirs = append(dirs, toolGitignoreDirs(dirs)...)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		d = realPath(d)
		for ; !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			if rel, err := filepath.Rel(top, d); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				break
			}
			files = append(files, file{filepath.Join(d, ".gitignore"), "a .gitignore"})
			if d == top {
				break
			}
		}
	}
	for _, f := range files {
		fi, err := os.Stat(f.path) // git follows a link to an exclude file
		if err != nil {
			continue
		}
		m := fi.Mode()
		switch {
		case hangsGit(m): // gitstall.go
			return fmt.Errorf("%s is %s, not a regular file: git reads it as %s and would wait on it without end; remove it ('rm %s') or make it a regular file, then run again", f.path, fileKind(fi), f.role, f.path)
		case m.IsRegular() && fi.Size() > excludeFileCap:
			return fmt.Errorf("%s is %s: git reads it whole as %s (a real one is a few kilobytes); remove or shorten it, then run again", f.path, byteSize(fi.Size()), f.role)
		}
	}
	return nil
}

// findDotGit walks up from dir to the first directory holding a .git
// entry: that directory and the entry's path; "" outside a work tree.
func findDotGit(dir string) (top, dotGit string) {
	dir = realPath(dir)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, filepath.Join(d, ".git")
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
}

// gitCommonDirOf is the common git directory of the .git entry dotGit: the
// directory itself, or for a linked worktree's .git file ("gitdir: X")
// the directory X's commondir names; "" when it cannot be read.
func gitCommonDirOf(dotGit string) string {
	fi, err := os.Stat(dotGit)
	if err != nil {
		return ""
	}
	dir := dotGit
	if !fi.IsDir() {
		data, err := readRegularFile(dotGit, 4096)
		if err != nil {
			return ""
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
		if !ok {
			return ""
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(dotGit), p)
		}
		dir = p
	}
	data, err := readRegularFile(filepath.Join(dir, "commondir"), 4096)
	if err != nil {
		return dir
	}
	c := strings.TrimSpace(string(data))
	if !filepath.IsAbs(c) {
		c = filepath.Join(dir, c)
	}
	return filepath.Clean(c)
}

// toolGitignoreDirs lists the directories where the tool writes its
// .gitignore (gitignore.go) in the projects holding dirs: every directory
// of the project's workspaces directory, and its ralph-mode state
// directory. A project is found as the commands find it
// (findProjectRoot); a directory in none adds nothing.
func toolGitignoreDirs(dirs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		project, marker := findProjectRoot(d)
		if marker == "" || seen[project] {
			continue
		}
		seen[project] = true
		out = append(out, filepath.Join(project, ralphStateDir))
		wsDir, _ := workspacesDirLenient(&cliEnv{projectRoot: project}) // a broken config: the default
		if !filepath.IsAbs(wsDir) {
			wsDir = filepath.Join(project, wsDir)
		}
		entries, _ := readDir(wsDir)
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, filepath.Join(wsDir, e.Name()))
			}
		}
	}
	return out
}
