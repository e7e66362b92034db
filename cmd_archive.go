package main

// This file implements the archive command: list, save, show, restore
// and delete (the archive's format is archive.go's, restoring restore.go's).
// The rules are: list shows the archives; save archives a workspace as
// clean does and keeps it, never under a run (the archive would catch it
// half way); show prints an archive's metadata and its entries, reading it
// through the safe reader; restore makes a new workspace of an archive,
// refusing to overwrite one; delete removes only a file of the archive
// directory, asking on a terminal or with -f.

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

func runArchiveSave(env *cliEnv, args []string) error {
	pos, err := parseFlags(newFlagSet("archive save"), args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("missing workspace")
	}
	w, err := workspaceFromArgs(env, pos)
	if err != nil {
		return err
	}
	release, err := claimWorkspace(w, pos[0], "archive")
	if err != nil {
		return err
	}
	defer release()
	archiveDir := filepath.Join(env.projectRoot, archiveDirName)
	if err := archiveDirLink(env.projectRoot, archiveDir); err != nil {
		return err
	}
	if within(w.Dir, archiveDir) {
		return fmt.Errorf("workspace %s (%s) holds the archive directory %s", w.Name, w.Dir, archiveDir)
	}
	shownDir := relPath(env.projectRoot, w.Dir)
	info, err := writeArchive(w.Dir, w.Name, archiveDir, time.Now())
	if err != nil {
		return interruptedEnd(env, fmt.Errorf("archiving workspace %s: %w", w.Name, err))
	}
	for _, rel := range info.skipped {
		fmt.Fprintf(env.stderr, "%s: warning: not archived: %s is not a directory, a regular file or a symbolic link\n", progName, filepath.Join(shownDir, rel))
	}
	warnLeftOut(env, shownDir, info)
	for _, l := range info.outward {
		fmt.Fprintf(env.stderr, "%s: warning: the symbolic link %s leads out of the workspace: 'archive restore' will refuse this archive (tar can still unpack it)\n", progName, filepath.Join(shownDir, l))
	}
	fmt.Fprintf(env.stdout, "Archived workspace %s to %s (%s, %s); the workspace is kept\n", w.Name, relPath(env.projectRoot, info.path), plural(info.files, "file"), byteSize(info.size))
	return nil
}

func runArchiveShow(env *cliEnv, args []string) error {
	pos, err := parseFlags(newFlagSet("archive show"), args, 1)
	if err != nil {
		return err
	}
	a, err := openArchivedArg(env, pos)
	if err != nil {
		return err
	}
	defer a.close()
	m := a.ws.meta
	out := &errWriter{w: env.stdout}
	fmt.Fprintf(out, "Archive:     %s", relPath(env.projectRoot, a.path))
	if fi, err := os.Stat(a.path); err == nil {
		fmt.Fprintf(out, " (%s)", byteSize(fi.Size()))
	}
	fmt.Fprintln(out)
	if !a.at.IsZero() {
		fmt.Fprintf(out, "Archived:    %s\n", a.at.Local().Format(time.DateTime))
	}
	fmt.Fprintf(out, "Workspace:   %s (%s mode)\n", sanitizeString(a.ws.Name), m.Mode)
	fmt.Fprintf(out, "Status:      %s\n", sanitizeString(m.Status))
	fmt.Fprintf(out, "Iterations:  %d in all, %d failed\n", m.Iterations, m.FailedIterations)
	if m.LastStopReason != "" {
		fmt.Fprintf(out, "Last stop:   %s\n", sanitizeString(m.LastStopReason))
	}
	fmt.Fprintf(out, "Files:\n")
	if out.err != nil {
		return writeError(out.err)
	}
	if err := listArchiveEntries(env.stdout, a.path); err != nil {
		return fmt.Errorf("%s: %w", relPath(env.projectRoot, a.path), err)
	}
	return nil
}

// listArchiveEntries prints the entries of the archive at src as tar -tv
// does: mode, size, time, name (and a link's target).
func listArchiveEntries(w io.Writer, src string) error {
	tr, f, err := openArchive(src)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		name := sanitizeString(hdr.Name)
		if hdr.Typeflag == tar.TypeSymlink {
			name += " -> " + sanitizeString(hdr.Linkname)
		}
		fmt.Fprintf(tw, "  %s\t%d\t %s\t %s\n", hdr.FileInfo().Mode(), hdr.Size, hdr.ModTime.Local().Format("2006-01-02 15:04"), name)
	}
	return writeError(tw.Flush())
}

func runArchiveDelete(env *cliEnv, args []string) error {
	fs := newFlagSet("archive delete")
	force := fs.Bool("f", false, "")
	fs.BoolVar(force, "force", false, "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	src, err := archiveArg(env, pos, "missing archive")
	if err != nil {
		return err
	}
	dir := filepath.Join(env.projectRoot, archiveDirName)
	if abs, err := filepath.Abs(src); err != nil || filepath.Dir(abs) != dir || !strings.HasSuffix(abs, ".tar.gz") {
		return fmt.Errorf("%s is not an archive in %s: delete removes only those", src, relPath(env.projectRoot, dir))
	}
	shown := relPath(env.projectRoot, src)
	if !*force {
		yes, err := confirm(env, fmt.Sprintf("Delete archive %s? [y/N] ", shown))
		if err != nil {
			return failUsage(env, fmt.Errorf("not deleting archive %s without confirmation: %v", shown, err), "to delete it without a question: claude-iterate archive delete -f %s", shellQuote(pos[0]))
		}
		if !yes {
			fmt.Fprintf(env.stdout, "Archive %s was not deleted\n", shown)
			return nil
		}
	}
	if err := os.Remove(src); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("deleting %s: %w", shown, unwrapPathError(err))
	}
	fmt.Fprintf(env.stdout, "Deleted archive %s\n", shown)
	return nil
}

// archiveUsage is the manual of the archive command.
const archiveUsage = `Usage: claude-iterate archive list
       claude-iterate archive save <workspace>
       claude-iterate archive show <archive>
       claude-iterate archive restore <archive> [<workspace>]
       claude-iterate archive delete <archive> [-f]

'claude-iterate clean' archives workspaces to claude-iterate/archive in the
project root: a real directory (a symbolic link there is refused, never
written or read through).

  list      lists the archived workspaces: name, and mode, status, iterations
            and progress when archived, the time of the archive and its file
  save      archives a workspace as clean does, and keeps it
  show      prints an archive's workspace (mode, status, iterations, last
            stop) and its files
  delete    removes an archive from claude-iterate/archive; asks on a
            terminal, elsewhere needs -f
  restore   unpacks <archive> into a new workspace: <workspace> if given (a
            name or a path), else the archived workspace's name. <archive> is
            a file, the name of one in claude-iterate/archive (.tar.gz may be
            left out), or a workspace name for its latest archive. The
            archive is kept.

restore refuses to overwrite an existing workspace, and refuses an archive
with an entry that would land outside the new workspace — an absolute path, a
"..", an entry written through a symbolic link, a symbolic link that leads
out of it — or an entry that is not a directory, a regular file or a symbolic
link. A refused archive leaves nothing behind.

Exit status: 0 done; 1 error (no such archive, a restore that would
overwrite); 2 usage error.

Examples:
  claude-iterate archive list
  claude-iterate archive restore api-migration
  claude-iterate archive restore api-migration-20250114T093000Z api-migration-2
  claude-iterate archive save api-migration
  claude-iterate archive show api-migration
  claude-iterate archive delete -f api-migration-20250114T093000Z
`

// openArchivedArg opens the archived workspace status --archived names.
func openArchivedArg(env *cliEnv, pos []string) (*archivedWorkspace, error) {
	src, err := archiveArg(env, pos, "missing archive (a workspace name, or an archive)")
	if err != nil {
		return nil, err
	}
	a, err := openArchived(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", relPath(env.projectRoot, src), err)
	}
	return a, nil
}

func runArchive(env *cliEnv, args []string) error {
	if len(args) == 0 {
		return usagef("missing subcommand: list, save, show, restore or delete")
	}
	switch sub := args[0]; {
	case sub == "list":
		if _, err := parseFlags(newFlagSet("archive list"), args[1:], 0); err != nil {
			return err
		}
		return listArchives(env, false)
	case sub == "restore":
		return runArchiveRestore(env, args[1:])
	case sub == "save":
		return runArchiveSave(env, args[1:])
	case sub == "show":
		return runArchiveShow(env, args[1:])
	case sub == "delete":
		return runArchiveDelete(env, args[1:])
	case sub == "-h" || sub == "-help" || sub == "--help":
		return errHelp
	case strings.HasPrefix(sub, "-"):
		return usagef("unknown flag %s", sub)
	default:
		if s := closestName(sub, []string{"list", "save", "show", "restore", "delete"}); s != "" {
			return usagef("unknown subcommand %q (did you mean %q?)", sub, s)
		}
		return usagef("unknown subcommand %q: want list, save, show, restore or delete", sub)
	}
}

func runArchiveRestore(env *cliEnv, args []string) error {
	pos, err := parseFlags(newFlagSet("archive restore"), args, 2)
	if err != nil {
		return err
	}
	src, err := archiveArg(env, pos, "missing archive")
	if err != nil {
		return err
	}
	shownSrc := relPath(env.projectRoot, src)
	dir, err := workspacesDir(env)
	if err != nil {
		return err
	}
	var w *workspace
	if len(pos) == 2 {
		w, err = locateNewWorkspace(env.projectRoot, dir, pos[1])
		if err != nil {
			return err
		}
	} else {
		top, err := archiveTop(src)
		if err != nil {
			return restoreError(shownSrc, err)
		}
		if !validName(top) {
			return usagef("the archived workspace's name %q is not a valid workspace name: give one after the archive", top)
		} else if why := branchNameFault(top); why != "" {
			return usagef("the archived workspace's name %q is no longer taken for a new workspace (%s): give one after the archive", top, why)
		}
		w, err = locateNewWorkspace(env.projectRoot, dir, top)
		if err != nil {
			return err
		}
	}
	for _, d := range [][2]string{{env.projectRoot, "the project root"}, {w.Dir, "the workspace"}} {
		if err := refuseGitDir(d[0], d[1]); err != nil { // gitworktree.go
			return err
		}
	}
	label := wsLabel(w, pos[1:])
	if !freeTarget(w.Dir) {
		return withHint(fmt.Errorf("workspace %s already exists (%s)", label, relPath(env.projectRoot, w.Dir)), "restore it under another name: claude-iterate archive restore %s <new-name>", pos[0])
	}
	if _, err := restoreArchive(src, w.Dir); err != nil {
		if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY) {
			return withHint(fmt.Errorf("workspace %s already exists (%s)", label, relPath(env.projectRoot, w.Dir)), "restore it under another name: claude-iterate archive restore %s <new-name>", pos[0])
		}
		return restoreError(shownSrc, err)
	}
	// A workspace restored under another name is named so in its metadata.
	if err := w.load(); err == nil && w.meta.Name != w.Name {
		w.meta.Name = w.Name
		if err := w.save(); err != nil {
			return fmt.Errorf("renaming the restored workspace in %s: %w", w.metadataPath(), err)
		}
	}
	fmt.Fprintf(env.stdout, "Restored workspace %s (%s) from %s\n", label, relPath(env.projectRoot, w.Dir), shownSrc)
	fmt.Fprintf(env.stdout, "Next: claude-iterate status %s\n", shellQuote(label))
	return nil
}
