package main

// This file finds the workspace a command's arguments name: a name under
// the workspaces directory, a path, or the ralph-mode workspace of the
// current directory; read-only commands look leniently (a broken config
// is a warning, not the end of a status).

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// workspaceFromArgs opens the workspace named by the optional positional
// argument, for a command that changes it (openWorkspace): without one,
// the ralph-mode workspace of the current directory.
func workspaceFromArgs(env *cliEnv, pos []string) (*workspace, error) {
	return workspaceFromArgsWith(env, pos, openWorkspace)
}

// lookUpFromArgs is workspaceFromArgs for a command that only looks at
// the workspace (lookUpWorkspace): a fresh clone's is not written.
func lookUpFromArgs(env *cliEnv, pos []string) (*workspace, error) {
	return workspaceFromArgsWith(env, pos, lookUpWorkspace)
}

// workspaceFromArgsWith is workspaceFromArgs, opening a named workspace
// with open. Finding a workspace needs no setting but workspacesDir, so a
// broken config file is left out with a warning (workspacesDirLenient), as
// status does: answer, history, logs, reset, clean, archive, template and
// merge work whatever a typo says. A command that needs the settings (run,
// verify) reads them first (baseLayers), and refuses.
func workspaceFromArgsWith(env *cliEnv, pos []string, open func(*cliEnv, string, string) (*workspace, error)) (*workspace, error) {
	if len(pos) == 0 || ralphDot(env, pos[0]) {
		return ralphFromArgs(env)
	}
	dir, warn := workspacesDirLenient(env)
	warnConfig(env, warn)
	w, err := open(env, dir, pos[0])
	if err != nil {
		return nil, err
	}
	warnSettings(env, w) // a command that needs them refused (needSettings)
	return w, nil
}

// parseWorkspaceArg parses the flags of a command that needs one
// workspace named, into fs, and returns its argument: none is a usage
// error, "missing " what ("workspace", or "workspace name" for the
// commands that make one).
func parseWorkspaceArg(fs *flag.FlagSet, args []string, what string) (string, error) {
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return "", err
	}
	if len(pos) == 0 {
		return "", usagef("missing %s", what)
	}
	return pos[0], nil
}

// claimFromArgs is workspaceFromArgs for a command that changes the
// workspace: it also claims it for doing (claimWorkspace), until release.
func claimFromArgs(env *cliEnv, pos []string, doing string) (w *workspace, release func(), err error) {
	if w, err = workspaceFromArgs(env, pos); err != nil {
		return nil, nil, err
	}
	arg := "" // the ralph-mode workspace
	if len(pos) == 1 && !w.Ralph {
		arg = pos[0]
	}
	if release, err = claimWorkspace(w, arg, doing); err != nil {
		return nil, nil, err
	}
	return w, release, nil
}

// wsLabel is how a command's messages name w, found from the optional
// argument pos: as the user named it, or, with none (the ralph-mode
// workspace, the archived one), by its name.
func wsLabel(w *workspace, pos []string) string {
	if len(pos) == 1 {
		return pos[0]
	}
	return w.Name
}

// lookAtWorkspace is workspaceFromArgs for the commands that only look at
// a workspace (status, watch): a broken config file is left out, and
// returned as warn.
func lookAtWorkspace(env *cliEnv, pos []string) (w *workspace, warn, err error) {
	if len(pos) == 0 || ralphDot(env, pos[0]) {
		w, err = ralphFromArgs(env)
		return w, nil, err
	}
	dir, warn := workspacesDirLenient(env)
	if w, err = lookUpWorkspace(env, dir, pos[0]); err != nil {
		return nil, warn, err
	}
	warnSettings(env, w)
	return w, warn, nil
}

// ralphFromArgs opens the ralph-mode workspace of the current directory.
func ralphFromArgs(env *cliEnv) (*workspace, error) {
	{
		w := ralphWorkspace(env.projectRoot)
		if err := w.load(); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, errNoRalphWorkspace()
			}
			return nil, err
		}
		return w, nil
	}
}

// ralphDot reports whether arg is ".", as list names the ralph-mode run
// of the project, and means it: "." holds no workspace of its own (no
// .metadata.json nor .workspace.json), and the project root has a
// ralph-mode run's state.
func ralphDot(env *cliEnv, arg string) bool {
	if arg != "." {
		return false
	}
	for _, f := range []string{metadataFile, settingsFile} {
		if _, err := os.Lstat(f); err == nil {
			return false
		}
	}
	return hasRalphState(env)
}

// hasRalphState reports whether the project root holds a ralph-mode run's
// state.
func hasRalphState(env *cliEnv) bool {
	_, err := os.Lstat(filepath.Join(env.projectRoot, ralphStateDir, metadataFile))
	return err == nil
}

// errNoRalphWorkspace is the usage error of a command given no workspace
// in a directory without a ralph-mode run.
func errNoRalphWorkspace() error {
	return &noRalphError{usageError{fmt.Sprintf("missing workspace (and no ralph-mode run in this directory: no %s)", filepath.Join(ralphStateDir, metadataFile))}}
}

// noRalphError is errNoRalphWorkspace's: a usage error, and a state that
// does not exist (os.ErrNotExist), as a missing workspace's.
type noRalphError struct{ usageError }

func (e *noRalphError) Unwrap() []error { return []error{&e.usageError, os.ErrNotExist} }

// workspacesDirLenient is workspacesDir for the commands that find an
// existing workspace (all but run, verify, init, setup, edit and archive
// restore, which need the settings): a broken config file must not lock
// the user out of a workspace or a live run, so it is left out, and
// returned as warn, for a warning.
func workspacesDirLenient(env *cliEnv) (dir string, warn error) {
	project, user, broken := baseLayersLenient(env.projectRoot)
	for _, b := range broken {
		warn = errors.Join(warn, b.err)
	}
	return resolveSettings(envLayer(), project, user).WorkspacesDir, warn
}

// warnConfig prints the warning about a broken config file that a lenient
// command left out.
func warnConfig(env *cliEnv, warn error) {
	if warn != nil {
		for _, l := range strings.Split(warn.Error(), "\n") {
			fmt.Fprintf(env.stderr, "%s: warning: %s (ignored here)\n", progName, sanitizeString(l))
		}
	}
}

// workspacesDir is the workspaces directory as the configuration files and
// the environment set it (not a workspace's own config, which is inside it).
func workspacesDir(env *cliEnv) (string, error) {
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return "", err
	}
	return resolveSettings(envLayer(), project, user).WorkspacesDir, nil
}

// linkedWorkspace refuses a workspace whose directory (or ralph-mode state
// directory) is a symbolic link: a workspace is a real directory, and
// every command, not only clean, would read and write wherever the link
// points (an agent's rm -rf W; ln -s /elsewhere W). One that is not there
// is left to the caller.
func linkedWorkspace(env *cliEnv, w *workspace) error {
	for _, dir := range []string{w.Dir, w.StateDir} {
		fi, err := os.Lstat(dir)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		target, _ := os.Readlink(dir)
		shown := relPath(env.projectRoot, dir)
		return withHint(fmt.Errorf("workspace %s: %s is a symbolic link to %s, not a directory: a workspace is a real directory, and no command reads or writes through the link", w.Name, shown, target),
			"if the directory it points to is this workspace, put it in the link's place: rm %s && mv %s %s", shellQuote(shown), shellQuote(target), shellQuote(shown))
	}
	return nil
}
