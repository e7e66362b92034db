package main

// This file implements archive save, show and delete (list and restore are
// in cmd_clean.go). The rules are: save archives a workspace as clean does
// and keeps it, never under a run (the archive would catch it half way);
// show prints an archive's metadata and its entries, reading it through
// the safe reader; delete removes only a file of the archive directory,
// asking on a terminal or with -f.

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	for _, l := range info.outward {
		fmt.Fprintf(env.stderr, "%s: warning: the symbolic link %s leads out of the workspace: 'archive restore' will refuse this archive (tar can still unpack it)\n", progName, filepath.Join(shownDir, l))
	}
	fmt.Fprintf(env.stdout, "Archived workspace %s to %s (%d files, %s); the workspace is kept\n", w.Name, relPath(env.projectRoot, info.path), info.files, byteSize(info.size))
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
	f, _, err := openRegular(src)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("not a gzip-compressed tar archive: %w", err)
	}
	tr := tar.NewReader(gz)
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
