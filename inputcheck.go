package main

// This file holds what init, setup and run check and say before they
// write, so that a command refused leaves nothing behind and one that
// goes on says where: a --prompt file read first, a ralph-mode state
// directory a refused run made removed again, a custom_script's path
// explained from the project root, the project root named when it is a
// parent of the current directory, and a new workspace's name that is a
// typo from an existing one.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkPromptFlag reads run's --prompt file (through c, the run's cache of
// it) before the run writes anything: a file that cannot be sent (missing,
// a directory, empty) is a usage error, as a --conditions file's is.
func checkPromptFlag(c *fileCache, prompt stringFlag) error {
	if !prompt.set {
		return nil
	}
	p := prompt.s
	data, err := c.read(p)
	if err != nil {
		return usagef("%v", readFault("prompt file", p, p, err, false))
	}
	if strings.TrimSpace(string(data)) == "" {
		return usagef("invalid value %q for flag --prompt: the file is empty", p)
	}
	return nil
}

// removeNewState undoes dir, a ralph-mode run's state directory that the
// run made and whose set-up then failed, once it releases lock: what it
// wrote there, then the directory, which would otherwise mark its parent
// as a project root (findProjectRoot) for nothing. Anything else in it
// keeps it. Nothing without the lock: the state was not the run's to undo.
func removeNewState(dir string, lock *runLock) {
	if dir == "" || lock == nil {
		return
	}
	lock.release() // first: a held lock's file is put back when removed
	for _, f := range []string{metadataFile, lockFile, ".gitignore"} {
		os.Remove(filepath.Join(dir, f))
	}
	os.Remove(dir)
}

// projectRootNote is the line init and run print when the project root is
// not the current directory, so that the user sees where the workspace and
// the agent's work go; "" when it is.
func projectRootNote(env *cliEnv) string {
	wd, err := os.Getwd()
	if err != nil || env.rootMarker == "" || sameDir(wd, env.projectRoot) {
		return ""
	}
	marker := env.rootMarker
	if marker != projectConfigName {
		marker += "/"
	}
	return fmt.Sprintf("Project root: %s (a parent of this directory; it holds %s)", env.projectRoot, marker)
}

// warnNearName warns, as a command makes the workspace named arg, of an
// existing one a typo away (closestName, as every did-you-mean): the new
// one is made all the same, as the user may mean it, and the line names
// the other. A path names no workspace of the list: no warning.
func warnNearName(env *cliEnv, workspacesDir, arg string) {
	if isWorkspacePath(arg) {
		return
	}
	var others []string
	for _, n := range namedWorkspaces(env.projectRoot, workspacesDir) {
		if n != arg {
			others = append(others, n)
		}
	}
	// A name typed is a prefix of (closestName's other guess) is no typo.
	if near := closestName(arg, others); near != "" && editDistance(strings.ToLower(arg), strings.ToLower(near)) <= 2 {
		fmt.Fprintf(env.stderr, "%s: warning: workspace %q exists, a typo away from %q: check that %q is the name meant (claude-iterate list)\n", progName, near, arg, arg)
	}
}

// scriptHereHint is the hint for a custom_script's relative path that is
// not in the project root but is in the current directory: how to name
// that one; "" when it is not there either.
func scriptHereHint(root, script string) string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	here := filepath.Join(wd, script)
	if _, err := os.Stat(here); err != nil {
		return ""
	}
	if rel, err := filepath.Rel(root, here); err == nil && within(root, here) {
		return fmt.Sprintf("%s is in the current directory: give it as %s (or an absolute path)", script, rel)
	}
	return fmt.Sprintf("%s is in the current directory: give it as %s", script, here)
}

// scriptFault is the fault of the custom_script condition c, which
// checkScript refused with err: a relative path not found names the
// project root, root, it was looked for in, and a hint names the file meant
// when it is in the current directory.
func scriptFault(root string, c *condition, err error) error {
	if _, serr := os.Stat(resolvePath(root, c.Script)); !errors.Is(serr, os.ErrNotExist) || filepath.IsAbs(c.Script) {
		return c.errorf("script", "%s: %v", c.Script, err)
	}
	fault := c.errorf("script", "%s: %v in %s (the project root: a condition's paths and scripts are relative to it)", c.Script, err, root)
	if hint := scriptHereHint(root, c.Script); hint != "" {
		return withHint(fault, "%s", hint)
	}
	return fault
}
