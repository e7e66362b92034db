package main

// This file implements clean and archive: a workspace is removed after it is
// archived to claude-iterate/archive/<name>-<UTC time>.tar.gz, and an archive
// is restored into a new workspace. The rules are: an archive holds one
// directory named after the workspace, with .metadata.json, .status.json,
// TODO.md and INSTRUCTIONS.md first, so that list and status read them
// without unpacking the rest; permissions are kept, and symbolic links are
// stored as links, never followed; clean removes nothing it could not
// archive, and asks for confirmation on a terminal, -f elsewhere.
//
// A restore never writes outside its target. It refuses an existing
// workspace; entries that are absolute or hold a ".." component, or lie
// outside the archive's one directory; entries other than directories,
// regular files and symbolic links; an entry written through a symbolic link
// (an earlier entry, or a directory the system resolves to one); and links
// that lead out of the target however they are chained, checked once every
// entry is unpacked. It unpacks into a fresh temporary directory next to the
// target and renames it into place only when everything passed, so a refused
// archive leaves nothing behind.

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// archiveDirName is where clean puts archives, under the project root.
const archiveDirName = "claude-iterate/archive"

// archiveTimeLayout is the UTC time in an archive's file name.
const archiveTimeLayout = "20060102T150405Z"

// archiveNameRE matches the file names clean gives archives: the workspace
// name, the UTC time, and a counter when two cleans share the second.
var archiveNameRE = regexp.MustCompile(`^(.+)-(\d{8}T\d{6}Z)(?:-(\d+))?\.tar\.gz$`)

// archiveHeadFiles are stored first in an archive, in this order.
var archiveHeadFiles = []string{metadataFile, statusFile, todoFile, instructionsFile}

// maxLinkHops bounds the symbolic links followed in one resolution, as the
// system's own limit (ELOOP) does.
const maxLinkHops = 40

// maxHeadFileSize bounds what list and status read of a head file.
const maxHeadFileSize = 4 << 20

// cleanUsage is the manual of the clean command.
const cleanUsage = `Usage: claude-iterate clean <workspace> [-f] [--no-archive]

Removes a workspace after archiving it to
claude-iterate/archive/<name>-<UTC time>.tar.gz in the project root: a
gzip-compressed tar archive of the workspace directory, permissions kept,
symbolic links stored as links (never followed). 'claude-iterate archive
restore' brings it back. On a terminal, clean asks for confirmation;
elsewhere it needs -f. A workspace being run is not cleaned: stop the run
first.

Options:
  -f, --force    remove without asking
  --no-archive   remove without archiving: the workspace is gone for good

Examples:
  claude-iterate clean api-migration
  claude-iterate clean -f api-migration        # in a script
  claude-iterate clean --no-archive scratch
`

// archiveUsage is the manual of the archive command.
const archiveUsage = `Usage: claude-iterate archive list
       claude-iterate archive restore <archive> [<workspace>]

'claude-iterate clean' archives workspaces to claude-iterate/archive in the
project root.

  list      lists the archived workspaces: name, and mode, status, iterations
            and progress when archived, the time of the archive and its file
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

Examples:
  claude-iterate archive list
  claude-iterate archive restore api-migration
  claude-iterate archive restore api-migration-20250114T093000Z api-migration-2
`

func runClean(env *cliEnv, args []string) error {
	flags := newFlagSet("clean")
	force := flags.Bool("f", false, "")
	flags.BoolVar(force, "force", false, "")
	noArchive := flags.Bool("no-archive", false, "")
	pos, err := parseFlags(flags, args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("missing workspace")
	}
	arg := pos[0]
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	s := resolveSettings(envLayer(), project, user)
	w, err := openWorkspace(env.projectRoot, s.str("workspacesDir"), arg)
	if err != nil {
		return err
	}
	release, err := claimWorkspace(w, arg, "clean")
	if err != nil {
		return err
	}
	defer release()
	archiveDir := filepath.Join(env.projectRoot, archiveDirName)
	if err := checkRemovable(env, w, archiveDir); err != nil {
		return err
	}
	shownDir := relPath(env.projectRoot, w.Dir)
	shownArchives := relPath(env.projectRoot, archiveDir)
	if !*force {
		question := fmt.Sprintf("Archive workspace %s to %s/ and remove %s? [y/N] ", w.Name, shownArchives, shownDir)
		if *noArchive {
			question = fmt.Sprintf("Remove workspace %s (%s) for good, without an archive? [y/N] ", w.Name, shownDir)
		}
		yes, err := confirm(env, question)
		if err != nil {
			return failUsage(env, fmt.Errorf("not removing workspace %s without confirmation: %v", w.Name, err), "to remove it without a question: claude-iterate clean -f %s", arg)
		}
		if !yes {
			return fmt.Errorf("workspace %s was not removed", w.Name)
		}
	}
	var info *archiveInfo
	if !*noArchive {
		info, err = writeArchive(w.Dir, w.Name, archiveDir, time.Now())
		if err != nil {
			return fmt.Errorf("archiving workspace %s: %w (nothing was removed)", w.Name, err)
		}
		for _, rel := range info.skipped {
			fmt.Fprintf(env.stderr, "%s: warning: not archived: %s is not a directory, a regular file or a symbolic link\n", progName, filepath.Join(shownDir, rel))
		}
		for _, l := range info.outward {
			fmt.Fprintf(env.stderr, "%s: warning: the symbolic link %s leads out of the workspace: 'archive restore' will refuse this archive (tar can still unpack it)\n", progName, filepath.Join(shownDir, l))
		}
		fmt.Fprintf(env.stdout, "Archived workspace %s to %s (%d files, %s)\n", w.Name, relPath(env.projectRoot, info.path), info.files, byteSize(info.size))
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
	if within(w.Dir, env.projectRoot) {
		return fmt.Errorf("workspace %s (%s) holds the current directory: clean it from elsewhere", w.Name, w.Dir)
	}
	if within(w.Dir, archiveDir) {
		return fmt.Errorf("workspace %s (%s) holds the archive directory %s", w.Name, w.Dir, archiveDir)
	}
	return nil
}

// within reports whether path is dir or lies below it (lexically).
func within(dir, path string) bool {
	r, err := filepath.Rel(dir, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// confirm asks question on the terminal and reports whether the answer is
// yes. It fails when standard input is not a terminal.
func confirm(env *cliEnv, question string) (bool, error) {
	in, ok := env.stdin.(*os.File)
	if !ok || !isTerminal(in) {
		return false, errors.New("standard input is not a terminal")
	}
	fmt.Fprint(env.stderr, question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(env.stderr)
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// byteSize shows a size in bytes, KiB or MiB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// archiveInfo is what writeArchive wrote.
type archiveInfo struct {
	path  string
	files int
	size  int64
	// skipped are the entries not archived (sockets, devices, pipes), and
	// outward the symbolic links leading out of the workspace, which a
	// restore refuses; both relative to the workspace.
	skipped, outward []string
}

// writeArchive archives the workspace directory dir, as top/, to a new file
// in archiveDir named after top and now. The file appears only once
// complete.
func writeArchive(dir, top, archiveDir string, now time.Time) (*archiveInfo, error) {
	if err := os.MkdirAll(archiveDir, 0o755); err != nil {
		return nil, err
	}
	base := top + "-" + now.UTC().Format(archiveTimeLayout)
	f, err := os.CreateTemp(archiveDir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	info := &archiveInfo{}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	if err := addWorkspace(tw, dir, top, info); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
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
		if err := os.Rename(tmp, p); err != nil {
			return nil, err
		}
		done = true
		info.path = p
		if fi, err := os.Stat(p); err == nil {
			info.size = fi.Size()
		}
		return info, nil
	}
}

// addWorkspace writes the workspace directory dir to tw as top/: the head
// files first, then the rest in lexical order.
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
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." || done[rel] {
			return err
		}
		if rel == lockFile {
			return nil // the run lock is the live workspace's, not the task's
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return addEntry(tw, dir, rel, top, fi, info)
	})
}

// addEntry writes one file of the workspace dir (rel, "" for dir itself),
// described by its Lstat fi, to tw.
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
	f, err := os.Open(full)
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

// splitEntryName splits an archive entry's name into its components,
// refusing a name that could land outside the directory it is unpacked in:
// empty, absolute, or with a ".." component. "." components and repeated
// slashes are dropped.
func splitEntryName(name string) ([]string, error) {
	if strings.HasPrefix(name, "/") {
		return nil, errors.New("an absolute path")
	}
	var comps []string
	for _, c := range strings.Split(name, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return nil, errors.New(`a path with ".."`)
		}
		if strings.IndexByte(c, 0) >= 0 {
			return nil, errors.New("a NUL byte in the name")
		}
		comps = append(comps, c)
	}
	if len(comps) == 0 {
		return nil, errors.New("an empty name")
	}
	return comps, nil
}

// checkLinkInside follows the symbolic link rel (slash-separated, below
// root, under real directories) as the system would — one component at a
// time, through every link met on the way — and fails if that ever leaves
// root. A missing component counts as a directory: what it leads to then
// is decided lexically, which is stricter than the system.
func checkLinkInside(root, rel string) error {
	target, err := os.Readlink(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	var at []string // where the resolution stands, below root
	if d := path.Dir(rel); d != "." {
		at = strings.Split(d, "/")
	}
	pending := strings.Split(target, "/")
	if path.IsAbs(target) {
		return fmt.Errorf("symbolic link to an absolute path (%s)", target)
	}
	for hops := 0; len(pending) > 0; {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(at) == 0 {
				return fmt.Errorf("symbolic link to %s leads out of the workspace", target)
			}
			at = at[:len(at)-1]
			continue
		}
		next := strings.Join(append(at[:len(at):len(at)], c), "/")
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(next)))
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			at = append(at, c)
			continue
		}
		if hops++; hops > maxLinkHops {
			return fmt.Errorf("symbolic link to %s: too many levels of symbolic links", target)
		}
		t, err := os.Readlink(filepath.Join(root, filepath.FromSlash(next)))
		if err != nil {
			return err
		}
		if path.IsAbs(t) {
			return fmt.Errorf("symbolic link to %s leads out of the workspace (through %s, a link to %s)", target, next, t)
		}
		// The link's target is relative to the directory holding it,
		// where the resolution stands.
		pending = append(strings.Split(t, "/"), pending...)
	}
	return nil
}

// refusal is an archive entry a restore refuses.
type refusal struct {
	entry string
	why   string
}

func (e *refusal) Error() string { return fmt.Sprintf("entry %q: %s", e.entry, e.why) }

// refuse makes a refusal of entry.
func refuse(entry, format string, args ...any) error {
	return &refusal{entry: entry, why: fmt.Sprintf(format, args...)}
}

// restoredAttr is the mode and time a restored file or directory gets once
// everything is unpacked.
type restoredAttr struct {
	mode     fs.FileMode
	modTime  time.Time
	explicit bool // from the directory's own entry, not made for its content
}

// restorer unpacks an archive into root, a fresh directory standing for
// the target.
type restorer struct {
	root  string
	top   string // the archive's one directory
	links []string
	dirs  map[string]restoredAttr // by slash-separated path below root; "" is root
	files map[string]restoredAttr
}

// restoreArchive unpacks the archive at src into target, a directory that
// must not exist (or be empty), and returns the name of the archive's
// directory.
func restoreArchive(src, target string) (string, error) {
	f, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("not a gzip-compressed tar archive: %w", err)
	}
	tr := tar.NewReader(gz)
	parent := filepath.Dir(target)
	// The missing directories above the target are made for the temporary
	// directory, and removed again if the restore fails.
	var made []string
	for d := parent; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	done := false
	defer func() {
		if !done {
			for _, d := range made {
				os.Remove(d)
			}
		}
	}()
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(target)+".restore-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if !done {
			removeTree(tmp)
		}
	}()
	r := &restorer{root: tmp, dirs: map[string]restoredAttr{}, files: map[string]restoredAttr{}}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("reading the archive: %w", err)
		}
		if err := r.add(hdr, tr); err != nil {
			return "", err
		}
	}
	if r.top == "" {
		return "", errors.New("the archive is empty")
	}
	for _, l := range r.links {
		if err := checkLinkInside(tmp, l); err != nil {
			return "", refuse(r.top+"/"+l, "%v", err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(tmp, metadataFile)); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("the archive holds no workspace: no %s/%s", r.top, metadataFile)
	}
	if err := r.finish(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, target); err != nil {
		return "", err
	}
	done = true
	return r.top, nil
}

// add unpacks one entry.
func (r *restorer) add(hdr *tar.Header, body io.Reader) error {
	comps, err := splitEntryName(hdr.Name)
	if err != nil {
		return refuse(hdr.Name, "%v", err)
	}
	if r.top == "" {
		r.top = comps[0]
	} else if comps[0] != r.top {
		return refuse(hdr.Name, "outside the archive's directory %q", r.top)
	}
	rel := strings.Join(comps[1:], "/")
	if rel == "" {
		if hdr.Typeflag != tar.TypeDir {
			return refuse(hdr.Name, "the workspace itself, and not a directory")
		}
		r.dirs[""] = restoredAttr{fs.FileMode(hdr.Mode).Perm(), hdr.ModTime, true}
		return nil
	}
	if err := r.makeParents(hdr.Name, comps[1:len(comps)-1]); err != nil {
		return err
	}
	full := filepath.Join(r.root, filepath.FromSlash(rel))
	switch hdr.Typeflag {
	case tar.TypeDir:
		err := os.Mkdir(full, 0o700)
		if errors.Is(err, fs.ErrExist) {
			if fi, lerr := os.Lstat(full); lerr != nil || !fi.IsDir() {
				return refuse(hdr.Name, "a directory in the place of an earlier entry")
			}
		} else if err != nil {
			return err
		}
		r.dirs[rel] = restoredAttr{fs.FileMode(hdr.Mode).Perm(), hdr.ModTime, true}
	case tar.TypeReg:
		// O_EXCL: an existing name, a symbolic link included, is never
		// opened, let alone followed.
		f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return refuse(hdr.Name, "a second entry of that name")
		}
		if err != nil {
			return err
		}
		_, err = io.Copy(f, body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("unpacking %s: %w", hdr.Name, err)
		}
		if err := os.Chmod(full, fs.FileMode(hdr.Mode).Perm()); err != nil {
			return err
		}
		r.files[rel] = restoredAttr{modTime: hdr.ModTime}
	case tar.TypeSymlink:
		if hdr.Linkname == "" {
			return refuse(hdr.Name, "a symbolic link to nothing")
		}
		if path.IsAbs(hdr.Linkname) {
			return refuse(hdr.Name, "symbolic link to an absolute path (%s)", hdr.Linkname)
		}
		if err := os.Symlink(hdr.Linkname, full); errors.Is(err, fs.ErrExist) {
			return refuse(hdr.Name, "a second entry of that name")
		} else if err != nil {
			return err
		}
		r.links = append(r.links, rel)
	default:
		return refuse(hdr.Name, "%s: only directories, regular files and symbolic links are restored", entryType(hdr.Typeflag))
	}
	return nil
}

// makeParents makes sure the directories dirs (the components between the
// archive's directory and an entry) are real directories, creating those
// missing. A symbolic link among them is refused: the entry would be
// written wherever it leads.
func (r *restorer) makeParents(entry string, dirs []string) error {
	for i := range dirs {
		rel := strings.Join(dirs[:i+1], "/")
		p := filepath.Join(r.root, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			if _, ok := r.dirs[rel]; !ok {
				r.dirs[rel] = restoredAttr{mode: 0o755}
			}
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return refuse(entry, "would be written through the symbolic link %s/%s", r.top, rel)
		case !fi.IsDir():
			return refuse(entry, "%s/%s is not a directory", r.top, rel)
		}
	}
	return nil
}

// finish gives files their times and directories their modes and times,
// deepest first, so that a read-only directory is made so once filled.
func (r *restorer) finish() error {
	for rel, a := range r.files {
		if !a.modTime.IsZero() {
			os.Chtimes(filepath.Join(r.root, filepath.FromSlash(rel)), a.modTime, a.modTime)
		}
	}
	if _, ok := r.dirs[""]; !ok {
		r.dirs[""] = restoredAttr{mode: 0o755}
	}
	rels := make([]string, 0, len(r.dirs))
	for rel := range r.dirs {
		rels = append(rels, rel)
	}
	depth := func(rel string) int {
		if rel == "" {
			return 0
		}
		return strings.Count(rel, "/") + 1
	}
	sort.Slice(rels, func(i, j int) bool { return depth(rels[i]) > depth(rels[j]) })
	for _, rel := range rels {
		a := r.dirs[rel]
		full := filepath.Join(r.root, filepath.FromSlash(rel))
		if err := os.Chmod(full, a.mode); err != nil {
			return err
		}
		if !a.modTime.IsZero() {
			os.Chtimes(full, a.modTime, a.modTime)
		}
	}
	return nil
}

// removeTree removes a partly restored tree, whose directories may already
// be read-only.
func removeTree(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
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

// archiveTop returns the name of the directory an archive holds: the first
// component of its first entry.
func archiveTop(src string) (string, error) {
	f, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("not a gzip-compressed tar archive: %w", err)
	}
	hdr, err := tar.NewReader(gz).Next()
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

// findArchive turns restore's and status's <archive> argument into a file:
// a name in the archive directory (with or without .tar.gz), a workspace
// name for its latest archive there, or else a file.
func findArchive(env *cliEnv, arg string) (string, error) {
	dir := filepath.Join(env.projectRoot, archiveDirName)
	if !strings.Contains(arg, "/") && arg != "" {
		for _, name := range []string{arg, arg + ".tar.gz"} {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p, nil
			}
		}
		if nameRE.MatchString(arg) {
			if p := latestArchive(dir, arg); p != "" {
				return p, nil
			}
		}
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.projectRoot, p)
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
	entries, _ := os.ReadDir(dir)
	best, bestKey := "", ""
	for _, e := range entries {
		m := archiveNameRE.FindStringSubmatch(e.Name())
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
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("not a gzip-compressed tar archive: %w", err)
	}
	tr := tar.NewReader(gz)
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
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o600); err != nil {
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
	if mm := archiveNameRE.FindStringSubmatch(filepath.Base(src)); mm != nil {
		a.at, _ = time.Parse(archiveTimeLayout, mm[2])
	}
	if a.at.IsZero() {
		if fi, err := f.Stat(); err == nil {
			a.at = fi.ModTime()
		}
	}
	return a, nil
}

// listArchives prints the archived workspaces, for 'archive list' and
// 'list --archived' (heading: after the workspaces).
func listArchives(env *cliEnv, heading bool) error {
	dir := filepath.Join(env.projectRoot, archiveDirName)
	shown := relPath(env.projectRoot, dir)
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading the archive directory: %w", err)
	}
	var archived []*archivedWorkspace
	var broken []error
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
		defer a.close()
		archived = append(archived, a)
	}
	sort.Slice(archived, func(i, j int) bool {
		if archived[i].ws.Name != archived[j].ws.Name {
			return archived[i].ws.Name < archived[j].ws.Name
		}
		return archived[i].at.Before(archived[j].at)
	})
	if heading {
		fmt.Fprintln(env.stdout)
	}
	if len(archived) == 0 && len(broken) == 0 {
		fmt.Fprintf(env.stdout, "No archived workspaces in %s.\n", shown)
		return nil
	}
	if heading {
		fmt.Fprintf(env.stdout, "Archived workspaces (%s):\n", shown)
	}
	if len(archived) > 0 {
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tMODE\tSTATUS\tITERATIONS\tPROGRESS\tARCHIVED\tARCHIVE")
		for _, a := range archived {
			ts, _ := readTaskStatus(a.ws)
			m := a.ws.meta
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", a.ws.Name, m.Mode, a.ws.displayStatus(), m.Iterations, ts.progressText(), a.at.Local().Format("2006-01-02 15:04"), filepath.Base(a.path))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, err := range broken {
		fmt.Fprintf(env.stderr, "%s: %v\n", progName, err)
	}
	if len(broken) > 0 {
		return &exitCodeError{code: exitError}
	}
	return nil
}

// openArchivedArg opens the archived workspace status --archived names.
func openArchivedArg(env *cliEnv, pos []string) (*archivedWorkspace, error) {
	if len(pos) == 0 {
		return nil, usagef("missing archive (a workspace name, or an archive)")
	}
	src, err := findArchive(env, pos[0])
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
		return usagef("missing subcommand: list or restore")
	}
	switch sub := args[0]; {
	case sub == "list":
		if _, err := parseFlags(newFlagSet("archive list"), args[1:], 0); err != nil {
			return err
		}
		return listArchives(env, false)
	case sub == "restore":
		return runArchiveRestore(env, args[1:])
	case sub == "-h" || sub == "-help" || sub == "--help":
		return errHelp
	case strings.HasPrefix(sub, "-"):
		return usagef("unknown flag %s", sub)
	default:
		return usagef("unknown subcommand %q: want list or restore", sub)
	}
}

func runArchiveRestore(env *cliEnv, args []string) error {
	pos, err := parseFlags(newFlagSet("archive restore"), args, 2)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("missing archive")
	}
	src, err := findArchive(env, pos[0])
	if err != nil {
		return err
	}
	shownSrc := relPath(env.projectRoot, src)
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	s := resolveSettings(envLayer(), project, user)
	var w *workspace
	if len(pos) == 2 {
		w, err = locateWorkspace(env.projectRoot, s.str("workspacesDir"), pos[1])
		if err != nil {
			return err
		}
	} else {
		top, err := archiveTop(src)
		if err != nil {
			return restoreError(shownSrc, err)
		}
		if !nameRE.MatchString(top) {
			return usagef("the archived workspace's name %q is not a valid workspace name: give one after the archive", top)
		}
		w, err = locateWorkspace(env.projectRoot, s.str("workspacesDir"), top)
		if err != nil {
			return err
		}
	}
	label := w.Name
	if len(pos) == 2 {
		label = pos[1]
	}
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
	fmt.Fprintf(env.stdout, "Next: claude-iterate status %s\n", label)
	return nil
}

// restoreError reports a failed restore of the archive shown.
func restoreError(shown string, err error) error {
	var r *refusal
	if errors.As(err, &r) {
		return fmt.Errorf("refusing archive %s: %v; nothing was restored", shown, err)
	}
	return fmt.Errorf("restoring %s: %v; nothing was restored", shown, err)
}

// freeTarget reports whether a restore may create dir: nothing is there, or
// an empty directory.
func freeTarget(dir string) bool {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil || !fi.IsDir() {
		return false
	}
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0
}
