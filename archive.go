package main

// This file writes and reads workspace archives,
// claude-iterate/archive/<name>-<UTC time>.tar.gz. The rules are: an archive
// holds one directory named after the workspace, with .metadata.json,
// .status.json, TODO.md and INSTRUCTIONS.md first, so that list and status
// read them without unpacking the rest; permissions are kept, and symbolic
// links are stored as links, never followed; the run lock is left out; an
// archive is private (0600) and its directory is kept out of git (a
// .gitignore of the tool's, made when missing), as it holds the runtime
// files, .metadata.json with a notify URL's credentials among them.
// Restoring is restore.go's; the commands are cmd_archive.go's and cmd_clean.go's;
// the limits of an archive and its directory are archivelimits.go's. It is
// longer than 600 lines because writing an archive and reading its head
// files back (list, show, status) keep the format's rules in one place.

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// archiveDirName is where clean puts archives, under the project root.
const archiveDirName = "claude-iterate/archive"

// archiveTimeLayout is the UTC time in an archive's file name.
const archiveTimeLayout = "20060102T150405Z"

// archiveNameRE matches the file names clean gives archives: the workspace
// name, the UTC time, and a counter when two cleans share the second.
var archiveNameRE = lazyRegexp(`^(.+)-(\d{8}T\d{6}Z)(?:-(\d+))?\.tar\.gz$`)

// archiveHeadFiles are stored first in an archive, in this order.
var archiveHeadFiles = []string{metadataFile, statusFile, todoFile, instructionsFile}

// maxLinkHops bounds the symbolic links followed in one resolution, as the
// system's own limit (ELOOP) does.
const maxLinkHops = 40

// maxHeadFileSize bounds what list and status read of a head file.
const maxHeadFileSize = 4 << 20

// archiveInfo is what writeArchive wrote.
type archiveInfo struct {
	path  string
	files int
	size  int64
	// skipped are the entries not archived (sockets, devices, pipes), and
	// outward the symbolic links leading out of the workspace, which a
	// restore refuses; both relative to the workspace.
	skipped, outward []string
	// tooLarge are the regular files left out for their size (limits).
	tooLarge []leftOutFile
	limits   archiveLimits
	stored   int64 // the regular files' bytes archived
	// ignoreErr is why the archive directory's .gitignore could not be
	// written (a warning).
	ignoreErr error
}

// archiveGitignore is the tool's .gitignore in the archive directory: an
// archive holds the workspace's runtime files — its .metadata.json, which
// may hold a notify URL's credentials, its logs — which stay out of git.
const archiveGitignore = "# Written by claude-iterate: archives hold a workspace's runtime files (its .metadata.json may hold a notify URL's credentials, its logs), kept out of git.\n*\n"

// ignoreArchives keeps the archive directory dir out of git: a .gitignore
// of the tool's there, made when missing; one already there (the tool's,
// or the user's) is left alone.
func ignoreArchives(dir string) error {
	p := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	if err := writeNewFile(p, archiveGitignore, 0o644); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("keeping the archives out of git: writing %s: %w", p, unwrapPathError(err))
	}
	return nil
}

// writeArchive archives the workspace directory dir, as top/, to a new file
// in archiveDir named after top and now. The file appears only once
// complete: a failure, or a signal (SIGINT, SIGTERM, SIGHUP: an
// *interruptedError), removes what was written.
func writeArchive(dir, top, archiveDir string, now time.Time) (*archiveInfo, error) {
	return writeArchiveLimited(dir, top, archiveDir, now, defaultArchiveLimits)
}

// writeArchiveLimited is writeArchive with the files' limits lim: a file
// past them is left out (info.tooLarge), the rest archived.
func writeArchiveLimited(dir, top, archiveDir string, now time.Time, lim archiveLimits) (*archiveInfo, error) {
	if err := makeDirAll(archiveDir, 0o755); err != nil {
		return nil, err
	}
	base := top + "-" + now.UTC().Format(archiveTimeLayout)
	// Caught before the temporary file exists, and let go after it is
	// removed or renamed (defers run last first).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer endInterruptible(sigs)
	t, err := newTempFile(filepath.Join(archiveDir, base+".tar.gz"))
	if err != nil {
		return nil, err
	}
	defer t.discard()
	info := &archiveInfo{limits: lim}
	gz := gzip.NewWriter(t)
	// Looked at before each write to gzip, which writes to the file
	// seldom when the data compresses well: a signal is seen within a
	// block of the tar (32 KiB) wherever it comes.
	f := &interruptibleWriter{w: gz, sigs: sigs}
	tw := tar.NewWriter(f)
	err = addWorkspace(tw, dir, top, info)
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		if ierr := f.check(); ierr != nil {
			return nil, ierr // what was being written when it came is beside the point
		}
		return nil, err
	}
	// Private: the workspace's .metadata.json may hold a secret.
	if err := t.f.Chmod(0o600); err != nil {
		return nil, err
	}
	if err := t.f.Sync(); err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	// Kept out of git before it appears: it holds the runtime files.
	info.ignoreErr = ignoreArchives(archiveDir)
	// Two cleans of workspaces of one name within a second get a counter.
	for i := 1; ; i++ {
		name := base + ".tar.gz"
		if i > 1 {
			name = fmt.Sprintf("%s-%d.tar.gz", base, i)
		}
		p := filepath.Join(archiveDir, name)
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := t.commit(p); err != nil {
			return nil, err
		}
		info.path = p
		if fi, err := os.Stat(p); err == nil {
			info.size = fi.Size()
		}
		return info, nil
	}
}

// addWorkspace writes the workspace directory dir to tw as top/: the head
// files first, then the rest in lexical order. With tw nil it only fills
// info.
func addWorkspace(tw *tar.Writer, dir, top string, info *archiveInfo) error {
	root, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if err := addEntry(tw, dir, "", top, root, info); err != nil {
		return err
	}
	done := map[string]bool{}
	for _, name := range archiveHeadFiles {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := addEntry(tw, dir, name, top, fi, info); err != nil {
			return err
		}
		done[name] = true
	}
	return walkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." || done[rel] {
			return err
		}
		if rel == lockFile || rel == runStateFile || rel == runEventsFile {
			return nil // the run lock, state and events are the live workspace's, not the task's
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return addEntry(tw, dir, rel, top, fi, info)
	})
}

// outwardLinks returns the symbolic links under the workspace directory dir
// that lead out of it, relative to dir, in lexical order: restore refuses
// an archive holding one.
func outwardLinks(dir string) ([]string, error) {
	var out []string
	err := walkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if checkLinkInside(dir, filepath.ToSlash(rel)) != nil {
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

// addEntry writes one file of the workspace dir (rel, "" for dir itself),
// described by its Lstat fi, to tw (nil: only info is filled). A regular
// file past info's limits is left out, named in info.tooLarge.
func addEntry(tw *tar.Writer, dir, rel, top string, fi fs.FileInfo, info *archiveInfo) error {
	full := filepath.Join(dir, rel)
	var link string
	switch mode := fi.Mode(); {
	case mode.IsDir(), mode.IsRegular():
	case mode&fs.ModeSymlink != 0:
		t, err := os.Readlink(full)
		if err != nil {
			return err
		}
		link = t
		if checkLinkInside(dir, filepath.ToSlash(rel)) != nil {
			info.outward = append(info.outward, rel)
		}
	default:
		info.skipped = append(info.skipped, rel)
		return nil
	}
	if fi.Mode().IsRegular() && info.leaveOut(rel, fi.Size()) {
		return nil // never read: a sparse 2 GiB file took minutes to archive
	}
	if tw == nil {
		if fi.Mode().IsRegular() {
			info.files++
		}
		return nil
	}
	hdr, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return fmt.Errorf("archiving %s: %w", full, err)
	}
	hdr.Name = top
	if rel != "" {
		hdr.Name += "/" + filepath.ToSlash(rel)
	}
	if fi.IsDir() {
		hdr.Name += "/"
	}
	// Whole seconds and no access or change times: plain ustar headers
	// where the names allow it, readable by every tar.
	hdr.ModTime = fi.ModTime().Truncate(time.Second)
	hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("archiving %s: %w", full, err)
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, _, err := openRegular(full)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
		return fmt.Errorf("archiving %s: %w (did it change meanwhile?)", full, err)
	}
	info.files++
	return nil
}

// entryType names a tar entry type.
func entryType(t byte) string {
	switch t {
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeChar:
		return "a character device"
	case tar.TypeBlock:
		return "a block device"
	case tar.TypeFifo:
		return "a named pipe"
	}
	return fmt.Sprintf("an entry of type %q", t)
}

// openArchive opens the gzip-compressed tar archive at src for reading
// (f is the file, for the caller to close).
func openArchive(src string) (tr *tar.Reader, f *os.File, err error) {
	f, _, err = openRegular(src)
	if err != nil {
		return nil, nil, err
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("not a gzip-compressed tar archive: %w", err)
	}
	return tar.NewReader(gz), f, nil
}

// archiveTop returns the name of the directory an archive holds: the first
// component of its first entry.
func archiveTop(src string) (string, error) {
	tr, f, err := openArchive(src)
	if err != nil {
		return "", err
	}
	defer f.Close()
	hdr, err := tr.Next()
	if err == io.EOF {
		return "", errors.New("the archive is empty")
	}
	if err != nil {
		return "", fmt.Errorf("reading the archive: %w", err)
	}
	comps, err := splitEntryName(hdr.Name)
	if err != nil {
		return "", refuse(hdr.Name, "%v", err)
	}
	return comps[0], nil
}

// archiveArg finds the archive named by a command's first argument; with
// none, it is the usage error missing.
func archiveArg(env *cliEnv, pos []string, missing string) (string, error) {
	if len(pos) == 0 {
		return "", usagef("%s", missing)
	}
	return findArchive(env, pos[0])
}

// findArchive turns restore's and status's <archive> argument into a file:
// a name in the archive directory (with or without .tar.gz), a workspace
// name for its latest archive there, or else a file.
func findArchive(env *cliEnv, arg string) (string, error) {
	dir := filepath.Join(env.projectRoot, archiveDirName)
	if !strings.Contains(arg, "/") && arg != "" {
		if err := archiveDirLink(env.projectRoot, dir); err != nil {
			return "", err
		}
		for _, name := range []string{arg, arg + ".tar.gz"} {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p, nil
			}
		}
		if validName(arg) {
			if p := latestArchive(dir, arg); p != "" {
				return p, nil
			}
		}
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.projectRoot, p)
	}
	if filepath.Dir(filepath.Clean(p)) == dir {
		if err := archiveDirLink(env.projectRoot, dir); err != nil {
			return "", err
		}
	}
	fi, err := os.Stat(p)
	if err == nil && fi.Mode().IsRegular() {
		return p, nil
	}
	if err == nil {
		return "", fmt.Errorf("archive %s is not a regular file", arg)
	}
	return "", withHint(fmt.Errorf("no archive %q: neither a file nor an archive in %s", arg, relPath(env.projectRoot, dir)), "list the archives with: claude-iterate archive list")
}

// latestArchive returns the newest archive of workspace name in dir, or "".
func latestArchive(dir, name string) string {
	entries, _ := readDir(dir)
	best, bestKey := "", ""
	for _, e := range entries {
		m := archiveNameRE().FindStringSubmatch(e.Name())
		if m == nil || m[1] != name || !e.Type().IsRegular() {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		if key := fmt.Sprintf("%s-%09d", m[2], n); key > bestKey {
			best, bestKey = filepath.Join(dir, e.Name()), key
		}
	}
	return best
}

// archivedWorkspace is a workspace read from an archive for list and
// status: its .metadata.json, .status.json and TODO.md, unpacked into a
// temporary directory.
type archivedWorkspace struct {
	ws   *workspace
	path string    // the archive
	at   time.Time // when it was archived
	tmp  string
}

// close removes the temporary directory.
func (a *archivedWorkspace) close() { os.RemoveAll(a.tmp) }

// openArchived reads the archived workspace in the archive at src.
func openArchived(src string) (a *archivedWorkspace, err error) {
	tr, f, err := openArchive(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tmp, err := os.MkdirTemp("", "claude-iterate-archived-*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	wanted := map[string]bool{metadataFile: true, statusFile: true, todoFile: true}
	head := map[string]bool{}
	for _, h := range archiveHeadFiles {
		head[h] = true
	}
	top := ""
	var meta []byte
	for len(wanted) > 0 {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the archive: %w", err)
		}
		comps, err := splitEntryName(hdr.Name)
		if err != nil {
			return nil, refuse(hdr.Name, "%v", err)
		}
		if top == "" {
			top = comps[0]
		}
		if len(comps) != 2 || comps[0] != top {
			if len(comps) > 1 && meta != nil {
				break // past the head files
			}
			continue
		}
		name := comps[1]
		if !head[name] && meta != nil {
			break
		}
		if !wanted[name] || hdr.Typeflag != tar.TypeReg {
			continue
		}
		delete(wanted, name)
		data, err := io.ReadAll(io.LimitReader(tr, maxHeadFileSize))
		if err != nil {
			return nil, fmt.Errorf("reading the archive: %w", err)
		}
		if name == metadataFile {
			meta = data
		}
		if err := writeFileAtomicSync(filepath.Join(tmp, name), data, 0o600, false); err != nil {
			return nil, err
		}
	}
	if meta == nil {
		return nil, fmt.Errorf("the archive holds no workspace: no %s", path.Join(top, metadataFile))
	}
	m, err := parseMetadata(src+": "+path.Join(top, metadataFile), meta)
	if err != nil {
		return nil, err
	}
	// An archived workspace runs nowhere, whatever pid it recorded.
	m.PID = 0
	a = &archivedWorkspace{ws: &workspace{Name: top, Dir: tmp, StateDir: tmp, meta: m}, path: src, tmp: tmp}
	if mm := archiveNameRE().FindStringSubmatch(filepath.Base(src)); mm != nil {
		a.at, _ = time.Parse(archiveTimeLayout, mm[2])
	}
	if a.at.IsZero() {
		if fi, err := f.Stat(); err == nil {
			a.at = fi.ModTime()
		}
	}
	return a, nil
}

// readArchives opens the project's archived workspaces, sorted by name
// then time (closeArchives removes what they unpacked); broken are the
// archives that could not be read.
func readArchives(env *cliEnv) (archived []*archivedWorkspace, broken []error, err error) {
	dir := filepath.Join(env.projectRoot, archiveDirName)
	if err := archiveDirLink(env.projectRoot, dir); err != nil {
		return nil, nil, err
	}
	entries, err := readDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("reading the archive directory: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".tar.gz") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		a, err := openArchived(p)
		if err != nil {
			broken = append(broken, fmt.Errorf("%s: %w", relPath(env.projectRoot, p), err))
			continue
		}
		archived = append(archived, a)
	}
	sort.Slice(archived, func(i, j int) bool {
		if archived[i].ws.Name != archived[j].ws.Name {
			return archived[i].ws.Name < archived[j].ws.Name
		}
		return archived[i].at.Before(archived[j].at)
	})
	return archived, broken, nil
}

// closeArchives closes what readArchives opened.
func closeArchives(archived []*archivedWorkspace) {
	for _, a := range archived {
		a.close()
	}
}

// listArchives prints the archived workspaces, for 'archive list' and
// 'list --archived' (heading: after the workspaces).
func listArchives(env *cliEnv, heading bool) error {
	archived, broken, err := readArchives(env)
	if err != nil {
		return err
	}
	defer closeArchives(archived)
	shown := relPath(env.projectRoot, filepath.Join(env.projectRoot, archiveDirName))
	if heading {
		fmt.Fprintln(env.stdout)
	}
	if len(archived) == 0 && len(broken) == 0 {
		fmt.Fprintf(env.stdout, "No archived workspaces in %s.\n", shown)
		return nil
	}
	if heading {
		for i, line := range wrapWidth(fmt.Sprintf("Archived workspaces (%s):", shown), wrapAt(env.stdout), wrapAt(env.stdout)-2, 0) {
			fmt.Fprintln(env.stdout, strings.Repeat("  ", min(i, 1))+line) // a narrow output: at a slash, indented
		}
	}
	if len(archived) > 0 {
		rows := make([][]string, len(archived))
		for i, a := range archived {
			ts, _ := readTaskStatus(a.ws)
			m := a.ws.meta
			// The names are the archive's own (its directory's, its file's): written out.
			rows[i] = []string{sanitizeString(a.ws.Name), m.Mode, sanitizeString(a.ws.displayStatus()), strconv.Itoa(m.Iterations), progressCell(a.ws, ts), a.at.Local().Format("2006-01-02 15:04"), sanitizeString(filepath.Base(a.path))}
		}
		// A narrow terminal keeps the name and the archive's file whole (what
		// 'archive restore' takes), the status cut short first.
		if err := writeTable(env.stdout, archiveHeader, rows, []int{prioKeep, 2, 6, 4, 5, 3, 8}, 2); err != nil {
			return err
		}
	}
	for _, err := range broken {
		fmt.Fprintf(env.stderr, "%s: %s\n", progName, sanitizeString(err.Error()))
	}
	if len(broken) > 0 {
		return &exitCodeError{code: exitError}
	}
	return nil
}

// archiveHeader is archive list's table header.
var archiveHeader = []string{"NAME", "MODE", "STATUS", "ITERATIONS", "PROGRESS", "ARCHIVED", "ARCHIVE"}

// interruptedError is a command ended by a signal, what it was writing
// removed.
type interruptedError struct{ sig syscall.Signal }

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted by %s; the partial archive was removed", signalName(e.sig))
}

// interruptibleWriter writes to w until a signal arrives on sigs.
type interruptibleWriter struct {
	w    io.Writer
	sigs chan os.Signal
	err  error
}

// check returns the *interruptedError of a signal received, if any.
func (iw *interruptibleWriter) check() error {
	if iw.err == nil {
		select {
		case sig := <-iw.sigs:
			s, _ := sig.(syscall.Signal)
			iw.err = &interruptedError{sig: s}
		default:
		}
	}
	return iw.err
}

func (iw *interruptibleWriter) Write(p []byte) (int, error) {
	if err := iw.check(); err != nil {
		return 0, err
	}
	return iw.w.Write(p)
}

// endInterruptible stops catching the signals on sigs. One that came after
// the last look (the archive was complete) ends the process as it would
// have without the catch.
func endInterruptible(sigs chan os.Signal) {
	signal.Stop(sigs)
	select {
	case sig := <-sigs:
		if s, ok := sig.(syscall.Signal); ok {
			raiseDefault(s)
		}
	default:
	}
}

// interruptedEnd turns an *interruptedError in err into the command's end:
// its message, then the signal raised again.
func interruptedEnd(env *cliEnv, err error) error {
	var ie *interruptedError
	if !errors.As(err, &ie) {
		return err
	}
	fmt.Fprintf(env.stderr, "%s: %v\n", progName, err)
	return &exitCodeError{code: exitCodeFor(ie.sig), signal: ie.sig}
}
