package main

// This file keeps the tool's runtime files out of git, so that an agent's
// `git add -A` commits none of them. The rules are:
//
//   - A workspace's state directory holds a .gitignore of the tool's that
//     names only the runtime files (runtimeFiles: the lock, the run state,
//     the metadata, the pending answer, the stop file, the history, the
//     logs with their reserve file, the verification report, the
//     temporary files, the run's events) and itself: no tracked file of the user's is
//     touched, and nothing of the tool's goes into a commit.
//   - The task files stay committable: INSTRUCTIONS.md, TODO.md,
//     .status.json (the agent's progress, which goes with its work),
//     ANSWERS.md and .workspace.json (the user's settings of the
//     workspace, workspacesettings.go).
//   - init makes it, and each run makes it again when it is missing; a
//     .gitignore whose first line is gitignoreHeader is the tool's, and is
//     brought up to date. Any other .gitignore there is the user's and is
//     never changed: the names go to the repository's info/exclude
//     instead, a block per state directory, added once — when the
//     directory is in a git work tree.
//   - A .gitignore there that is not a regular file (a directory, a
//     symbolic link — never followed —, a named pipe) is neither read nor
//     written: the names go to info/exclude, and a one-line warning names
//     it, what it is and the fix (a named pipe makes git, the user's own
//     git status too, wait without end).
//   - A failure is a warning: it never stops init or a run.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// gitignoreHeader is the first line of the tool's .gitignore.
const gitignoreHeader = "# Written by claude-iterate: its runtime files in this directory, kept out of git."

// gitignoreCap bounds the .gitignore and info/exclude files read.
const gitignoreCap = 1 << 20

// runtimeFiles are the patterns of the tool's runtime files, relative to
// a state directory.
var runtimeFiles = []string{lockFile, runStateFile, metadataFile, answerFile, stopFile, historyFile,
	logsDir + "/", verifyReportFile, lockFile + ".new", ".*" + tempSuffix, runEventsFile}

// gitignoreText is the tool's .gitignore.
func gitignoreText() string {
	var b strings.Builder
	b.WriteString(gitignoreHeader + "\n")
	fmt.Fprintf(&b, "# The task files (%s, %s, %s, %s, %s) stay committable.\n", instructionsFile, todoFile, statusFile, answersFile, settingsFile)
	b.WriteString("# claude-iterate rewrites this file while its first line is kept.\n")
	b.WriteString("/.gitignore\n")
	for _, f := range runtimeFiles {
		b.WriteString("/" + f + "\n")
	}
	return b.String()
}

// ignoreRuntimeFiles keeps w's runtime files out of git: the tool's
// .gitignore in its state directory, or, beside a .gitignore of the
// user's, the repository's info/exclude.
func ignoreRuntimeFiles(w *workspace) error {
	path := filepath.Join(w.StateDir, ".gitignore")
	want := gitignoreText()
	data, err := readRegularFile(path, gitignoreCap)
	switch {
	case errors.Is(err, os.ErrNotExist):
		err := writeNewFile(path, want, 0o644)
		if errors.Is(err, os.ErrExist) {
			if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
				break // a link to nowhere, never written through: said below
			}
			return nil // made meanwhile, by another init or run
		}
		if err != nil {
			return fmt.Errorf("keeping the runtime files out of git: writing %s: %w", path, unwrapPathError(err))
		}
		return nil
	case err == nil && strings.HasPrefix(string(data), gitignoreHeader+"\n"):
		if string(data) == want {
			return nil
		}
		if err := writeFileAtomicSync(path, []byte(want), 0o644, false); err != nil {
			return fmt.Errorf("keeping the runtime files out of git: writing %s: %w", path, unwrapPathError(err))
		}
		return nil
	}
	exclude, exErr := excludeRuntimeFiles(w.StateDir)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if exErr != nil {
			return fmt.Errorf("%w; %w", notRegularGitignore(path, fi, exclude), exErr)
		}
		return notRegularGitignore(path, fi, exclude)
	}
	return exErr
}

// notRegularGitignore says that the .gitignore at path is not a regular
// file (so the tool neither reads nor writes it), what that means and how
// to fix it, in one line; exclude is where the names went instead ("" when
// nowhere).
func notRegularGitignore(path string, fi fs.FileInfo, exclude string) error {
	kind := fileKind(fi)
	if fi.Mode()&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket) != 0 {
		return fmt.Errorf("%s is %s, not a regular file: git, your own git status too, would wait on it without end; remove it ('rm %s') and run again", path, kind, path)
	}
	instead := "the runtime files are not kept out of git"
	if exclude != "" {
		instead = "the runtime files are kept out of git through " + exclude + " instead"
	}
	fix := "remove it ('rm " + path + "')"
	if fi.IsDir() {
		fix = "move it away"
	}
	return fmt.Errorf("%s is %s, not a regular file: %s; for the tool's own .gitignore there, %s and run again", path, kind, instead, fix)
}

// excludeRuntimeFiles names the runtime files of dir in the info/exclude
// of the git repository around it, once, and returns that file's path;
// outside a repository it does nothing.
func excludeRuntimeFiles(dir string) (string, error) {
	if !underGit(dir) {
		return "", nil
	}
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("keeping the runtime files out of git: %w", err)
	}
	out, err := runGit(dir, "rev-parse", "--show-toplevel", "--git-path", "info/exclude")
	if err != nil {
		return fail(fmt.Errorf("git rev-parse in %s: %v", dir, err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return fail(fmt.Errorf("git rev-parse in %s said %q", dir, out))
	}
	top, exclude := lines[0], lines[1]
	if !filepath.IsAbs(exclude) {
		exclude = filepath.Join(dir, exclude)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fail(err)
	}
	top = realPath(top)
	rel, err := filepath.Rel(top, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return fail(fmt.Errorf("%s is outside its work tree %s", dir, top))
	}
	prefix := "/"
	if rel != "." {
		prefix = "/" + filepath.ToSlash(rel) + "/"
	}
	if err := makeDirAll(filepath.Dir(exclude), 0o755); err != nil {
		return fail(err)
	}
	if err := addExcludeBlock(exclude, prefix); err != nil {
		return fail(fmt.Errorf("%s: %w", exclude, unwrapPathError(err)))
	}
	return exclude, nil
}

// addExcludeBlock adds to exclude, unless there already, the block naming
// the runtime files of the state directory at prefix. The file is the
// repository's, shared by every workspace in it and by its user: the update
// holds it locked (writelock.go), so that two at once both land.
func addExcludeBlock(exclude, prefix string) error {
	var lines []string
	for _, f := range runtimeFiles {
		lines = append(lines, prefix+f)
	}
	return addExcludeLines(exclude, "# claude-iterate: the runtime files in "+prefix, lines)
}

// addExcludeLines adds to exclude, unless there already, the block of
// lines that begin starts, under the file's update lock.
func addExcludeLines(exclude, begin string, lines []string) error {
	for {
		unlock, missing, err := lockForUpdate(exclude)
		if err != nil {
			return err
		}
		data, err := readRegularFile(exclude, gitignoreCap)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			unlock()
			return err
		}
		if slices.Contains(strings.Split(string(data), "\n"), begin) {
			unlock()
			return nil
		}
		text := string(data)
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += begin + "\n"
		for _, l := range lines {
			text += l + "\n"
		}
		if missing {
			err = createFileAtomic(exclude, []byte(text), 0o644)
		} else {
			err = writeFileAtomicSync(exclude, []byte(text), 0o644, false) // the update's last write
		}
		unlock()
		if missing && errors.Is(err, fs.ErrExist) {
			continue // made meanwhile: add to that one, under its lock
		}
		return err
	}
}

// underGit reports whether dir is below a .git entry, without starting
// git.
func underGit(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}
