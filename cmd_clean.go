package main

// This file implements the clean command. The rules are: clean removes a
// workspace only after it is archived (unless --no-archive; the archive is
// archive.go's), never while a run holds it, and removes nothing it could
// not archive; it asks for confirmation on a terminal, and needs -f
// elsewhere.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// cleanUsage is the manual of the clean command.
const cleanUsage = `Usage: claude-iterate clean <workspace> [-f] [--no-archive] [--allow-outward-links] [--leave-out-large] [--delete-branch]

Removes a workspace after archiving it to
claude-iterate/archive/<name>-<UTC time>.tar.gz in the project root: a
gzip-compressed tar archive of the workspace directory, permissions kept,
symbolic links stored as links (never followed). 'claude-iterate archive
restore' brings it back. On a terminal, clean asks for confirmation;
elsewhere it needs -f. A workspace being run is not cleaned: stop the run
first.

A workspace holding a symbolic link that leads out of it (a Python venv has
them) is not cleaned: 'archive restore' would refuse its archive. Remove the
link first, or give --allow-outward-links.

An archive leaves out a file larger than 1.5 GiB (a run's log stays under
1 GiB and a bit), and the files past 6 GiB in all: a workspace that would
lose one is not cleaned. Move the file out of it first, or give
--leave-out-large to clean it without them (each left out is named).

A workspace that runs in a git worktree (run --worktree) is not cleaned
while its branch has commits that no other branch holds ('claude-iterate
merge' first), or its worktree has uncommitted changes (merge takes
commits only: commit them with 'git -C <worktree> add -A && git -C
<worktree> commit', or let the next run commit them, then merge);
-f/--force cleans it anyway, and the archive keeps unmerged.patch, a
patch of that work (so --no-archive is refused then). The worktree is removed with 'git worktree
remove' (one deleted by hand is pruned, with a warning); the branch is
kept unless --delete-branch. A worktree on another branch than its own is
not cleaned without -f; a path that is no longer the worktree (a link, a
broken .git) is never cleaned: repair it or move it away first.

A workspace whose .metadata.json cannot be read (a FIFO, a directory, a
link, a typo an agent left) is cleaned all the same: a regular file is kept
in the archive as .metadata.json.broken, anything else is removed (a link
itself, never what it leads to), said in one line; the archive restores as
a workspace taken up from its task files.

Declining the question leaves the workspace and exits 0.

Options:
  -f, --force              remove without asking
  --no-archive             remove without archiving: the workspace is gone for good
  --allow-outward-links    archive and remove even with links leading out of
                           the workspace (only tar will unpack that archive)
  --leave-out-large        archive and remove even when files too large for
                           the archive are left out of it (they are lost)
  --delete-branch          also delete the workspace's git branch

Exit status: 0 cleaned; 1 error (nothing removed when archiving failed);
2 usage error.

Examples:
  claude-iterate clean api-migration
  claude-iterate clean -f api-migration        # in a script
  claude-iterate clean --no-archive scratch
`

func runClean(env *cliEnv, args []string) error {
	flags := newFlagSet("clean")
	force := flags.Bool("f", false, "")
	flags.BoolVar(force, "force", false, "")
	noArchive := flags.Bool("no-archive", false, "")
	allowOutward := flags.Bool("allow-outward-links", false, "")
	leaveOutLarge := flags.Bool("leave-out-large", false, "")
	deleteBranch := flags.Bool("delete-branch", false, "")
	arg, err := parseWorkspaceArg(flags, args, "workspace")
	if err != nil {
		return err
	}
	w, release, err := cleanTarget(env, arg)
	if err != nil {
		return err
	}
	defer release()
	if *leaveOutLarge && *noArchive {
		return usagef("--leave-out-large leaves files out of the archive, and --no-archive makes none: give one of them")
	}
	if w.Ralph { // ".": its directory is the project's root
		return withHint(errors.New("clean removes a named workspace, not the ralph-mode run"), "claude-iterate reset . clears the ralph-mode run's state (.claude-iterate/)")
	}
	archiveDir := filepath.Join(env.projectRoot, archiveDirName)
	if err := checkRemovable(env, w, archiveDir); err != nil {
		return err
	}
	if !*noArchive {
		if err := archiveDirLink(env.projectRoot, archiveDir); err != nil {
			return err // before the question
		}
	}
	gitWork, err := planGitClean(env, w, *force, *noArchive, *deleteBranch) // gitclean.go
	if err != nil {
		return err
	}
	shownDir := relPath(env.projectRoot, w.Dir)
	shownArchives := relPath(env.projectRoot, archiveDir)
	var outward []string
	if !*noArchive {
		// Checked before the question: an archive that restore refuses is
		// no archive to the user who answers it.
		if outward, err = outwardLinks(w.Dir); err != nil {
			return fmt.Errorf("checking workspace %s: %w", w.Name, err)
		}
		if w.unreadable != nil { // a link there is removed, not archived
			outward = slices.DeleteFunc(outward, func(rel string) bool { return rel == metadataFile })
		}
		if len(outward) > 0 && !*allowOutward {
			more := ""
			if len(outward) > 1 {
				more = fmt.Sprintf(" (and %d more)", len(outward)-1)
			}
			return withHint(fmt.Errorf("not cleaning workspace %s: the symbolic link %s%s leads out of it, and 'archive restore' would refuse its archive", w.Name, filepath.Join(shownDir, outward[0]), more),
				"remove the link first, or clean it anyway (only tar will unpack the archive): claude-iterate clean --allow-outward-links %s", shellQuote(arg))
		}
		for _, l := range outward {
			fmt.Fprintf(env.stderr, "%s: warning: the symbolic link %s leads out of the workspace: 'archive restore' will refuse this archive (tar can still unpack it)\n", progName, filepath.Join(shownDir, l))
		}
		// Checked before the question too: a file the archive leaves out
		// is lost with the workspace.
		plan, err := planArchive(w.Dir, defaultArchiveLimits)
		if err != nil {
			return fmt.Errorf("checking workspace %s: %w", w.Name, err)
		}
		if err := refuseLeftOut(w, plan, shownDir, arg, *leaveOutLarge); err != nil {
			return err
		}
	}
	if !*force {
		question := fmt.Sprintf("Archive workspace %s to %s/ and remove %s? [y/N] ", w.Name, shownArchives, shownDir)
		if *noArchive {
			question = fmt.Sprintf("Remove workspace %s (%s) for good, without an archive? [y/N] ", w.Name, shownDir)
		}
		yes, err := confirm(env, question)
		if err != nil {
			return failUsage(env, fmt.Errorf("not removing workspace %s without confirmation: %v", w.Name, err), "to remove it without a question: claude-iterate clean -f %s", shellQuote(arg))
		}
		if !yes {
			// Declining is an answer, not an error.
			fmt.Fprintf(env.stdout, "Workspace %s was not removed\n", w.Name)
			return nil
		}
	}
	if w.unreadable != nil {
		if err := setUnreadableAside(env, w, !*noArchive); err != nil {
			return fmt.Errorf("%w (nothing else was removed)", err)
		}
	}
	var info *archiveInfo
	if !*noArchive {
		if err := gitWork.markRemoved(w); err != nil {
			return fmt.Errorf("saving workspace %s's metadata: %w (nothing was removed)", w.Name, err)
		}
		if err := gitWork.writePatch(w); err != nil {
			return fmt.Errorf("keeping a patch of workspace %s's unmerged work: %w (nothing was removed)", w.Name, err)
		}
		info, err = writeArchive(w.Dir, w.Name, archiveDir, time.Now())
		if err != nil {
			return interruptedEnd(env, fmt.Errorf("archiving workspace %s: %w (nothing was removed)", w.Name, err))
		}
		for _, rel := range info.skipped {
			fmt.Fprintf(env.stderr, "%s: warning: not archived: %s is not a directory, a regular file or a symbolic link\n", progName, filepath.Join(shownDir, rel))
		}
		warnLeftOut(env, shownDir, info)
		if err := refuseLeftOut(w, info, shownDir, arg, *leaveOutLarge); err != nil { // grown since the check
			return withHint(errors.Unwrap(err), "the archive %s lacks it; the workspace %s is kept", relPath(env.projectRoot, info.path), shownDir)
		}
		fmt.Fprintf(env.stdout, "Archived workspace %s to %s (%s, %s)\n", w.Name, relPath(env.projectRoot, info.path), plural(info.files, "file"), byteSize(info.size))
	}
	if err := gitWork.remove(env); err != nil {
		if info != nil {
			return withHint(err, "the archive %s is complete; the workspace %s is kept: clean it again once that is fixed", relPath(env.projectRoot, info.path), shownDir)
		}
		return err
	}
	if err := os.RemoveAll(w.Dir); err != nil {
		if info != nil {
			return withHint(fmt.Errorf("removing %s: %w", shownDir, unwrapPathError(err)), "the archive %s is complete; remove what is left by hand", relPath(env.projectRoot, info.path))
		}
		return fmt.Errorf("removing %s: %w", shownDir, unwrapPathError(err))
	}
	if info == nil {
		fmt.Fprintf(env.stdout, "Removed %s (no archive)\n", shownDir)
		return nil
	}
	fmt.Fprintf(env.stdout, "Removed %s\n", shownDir)
	fmt.Fprintf(env.stdout, "Restore it with: claude-iterate archive restore %s\n", strings.TrimSuffix(filepath.Base(info.path), ".tar.gz"))
	return nil
}

// checkRemovable refuses to clean a workspace whose removal would take more
// than the workspace: a directory reached through a symbolic link, or one
// holding the current directory or the archives.
func checkRemovable(env *cliEnv, w *workspace, archiveDir string) error {
	fi, err := os.Lstat(w.Dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("workspace %s is a symbolic link (%s): clean removes only real directories", w.Name, relPath(env.projectRoot, w.Dir))
	}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("finding the current directory: %w", err)
	}
	if within(w.Dir, wd) || within(w.Dir, env.projectRoot) {
		return fmt.Errorf("workspace %s (%s) holds the current directory: clean it from elsewhere", w.Name, w.Dir)
	}
	if within(w.Dir, archiveDir) {
		return fmt.Errorf("workspace %s (%s) holds the archive directory %s", w.Name, w.Dir, archiveDir)
	}
	return nil
}

// refuseLeftOut refuses to clean workspace w (named arg) when its archive
// info leaves a file out for its size, unless allowed
// (--leave-out-large): the file would be lost.
func refuseLeftOut(w *workspace, info *archiveInfo, shownDir, arg string, allowed bool) error {
	if len(info.tooLarge) == 0 || allowed {
		return nil
	}
	f := info.tooLarge[0]
	more := ""
	if len(info.tooLarge) > 1 {
		more = fmt.Sprintf(" and %s", plural(len(info.tooLarge)-1, "more file"))
	}
	shown := filepath.Join(shownDir, f.rel)
	return withHint(fmt.Errorf("not cleaning workspace %s: its archive would leave out %s (%s, %s)%s, lost with the workspace", w.Name, shown, byteSize(f.size), f.reason(info.limits), more),
		"move it out of the workspace first, or clean without it: claude-iterate clean --leave-out-large %s", shellQuote(arg))
}

// metadataFault is err, the fault of w's .metadata.json (what is in its
// place, a typo), with what to do: a link or what is there is removed (a
// run takes the workspace up again from its task files), a typo fixed; or
// the workspace removed, which clean does all the same (cleanTarget).
func metadataFault(w *workspace, err error) error {
	path := w.metadataPath()
	hint := fileFaultHint(path, path, err)
	if fi, lerr := os.Lstat(path); hint == "" && lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		// Not the tool's: "fix it" would edit what it leads to.
		hint = "rm " + shellQuote(path) + " removes the link (not what it leads to)"
	}
	switch {
	case w.Ralph && hint == "":
		return err
	case w.Ralph:
		return withHint(err, "%s; a run takes up the workspace again from its task files", hint)
	case hint == "":
		return withHint(err, "fix it, or remove the workspace: claude-iterate clean -f %s", wsCmdArg(w))
	}
	return withHint(err, "%s; a run takes up the workspace again from its task files; or remove the workspace: claude-iterate clean -f %s", hint, wsCmdArg(w))
}

// cleanTarget finds and claims the workspace clean removes (claimFromArgs).
// One whose .metadata.json cannot be read (a FIFO, a directory, a link,
// a typo: an agent's doing), or, without one, whose settings file cannot,
// is cleaned all the same: w.unreadable says why, and w.meta is fresh
// metadata from its task files, as a fresh clone's (setUnreadableAside
// deals with the entry once the user said yes).
func cleanTarget(env *cliEnv, arg string) (w *workspace, release func(), err error) {
	w, release, err = claimFromArgs(env, []string{arg}, "clean")
	if err == nil {
		return w, release, nil
	}
	dir, _ := workspacesDirLenient(env) // claimFromArgs warned
	bw, lerr := locateWorkspace(env.projectRoot, dir, arg)
	if lerr != nil || bw.Ralph {
		return nil, nil, err
	}
	if fi, serr := os.Lstat(bw.Dir); serr != nil || !fi.IsDir() {
		return nil, nil, err
	}
	lerr = bw.load()
	if errors.Is(lerr, os.ErrNotExist) && hasTaskFiles(bw) {
		_, lerr = loadOrFresh(bw) // the settings file's fault
	}
	if lerr == nil || errors.Is(lerr, os.ErrNotExist) {
		return nil, nil, err // not why it failed
	}
	bw.unreadable = lerr
	bw.meta = &metadata{Name: bw.Name, Mode: modeLoop, Created: time.Now().UTC().Truncate(time.Second), Status: statusNew}
	switch s, serr := readSettings(bw); {
	case serr == nil:
		bw.meta.settingsErr = bw.meta.applySettings(s, settingsPath(bw))
	case !errors.Is(serr, os.ErrNotExist):
		bw.meta.settingsErr = serr // never rewritten
	}
	if release, err = claimWorkspace(bw, arg, "clean"); err != nil {
		return nil, nil, err
	}
	return bw, release, nil
}

// setUnreadableAside deals with the .metadata.json of w that cannot be
// read (w.unreadable), once the user said yes, saying what it did: a
// regular file (a typo) is kept as .metadata.json.broken, anything else
// (a FIFO, a directory, a link: never followed) removed; with an archive
// to write, w's fresh metadata is saved in its place, so that the archive
// restores as a workspace taken up from its task files.
func setUnreadableAside(env *cliEnv, w *workspace, archive bool) error {
	p := w.metadataPath()
	shown := relPath(env.projectRoot, p)
	then := ""
	if archive {
		then = ": the workspace is archived as taken up from its task files"
	}
	switch fi, err := os.Lstat(p); {
	case errors.Is(err, os.ErrNotExist): // no metadata: its settings file's fault
	case err != nil:
		return fmt.Errorf("removing %s: %w", shown, unwrapPathError(err))
	case fi.Mode().IsRegular():
		if err := renameNoFollow(p, p+".broken"); err != nil {
			return fmt.Errorf("keeping %s aside: %w", shown, unwrapPathError(err))
		}
		fmt.Fprintf(env.stderr, "%s: kept %s, which cannot be read, as %s.broken%s\n", progName, shown, metadataFile, then)
	default:
		kind := fileKind(fi)
		if target, err := os.Readlink(p); err == nil {
			kind += " to " + sanitizeString(target)
		}
		if err := removeEntry(p, fi); err != nil {
			return fmt.Errorf("removing %s: %w", shown, unwrapPathError(err))
		}
		fmt.Fprintf(env.stderr, "%s: removed %s (%s, not the workspace's metadata)%s\n", progName, shown, kind, then)
	}
	if !archive {
		return nil
	}
	if err := w.save(); err != nil {
		return fmt.Errorf("saving workspace %s's fresh metadata: %w", w.Name, err)
	}
	return nil
}

// removeEntry removes what is at p, fi its Lstat: a directory with what
// it holds, anything else (a link: itself, never its target) alone.
func removeEntry(p string, fi os.FileInfo) error {
	if fi.IsDir() {
		return os.RemoveAll(p)
	}
	return os.Remove(p)
}
