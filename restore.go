package main

// This file restores an archive into a new workspace. The rules are: a
// restore never writes outside its target. It refuses an existing
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
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

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
	mode    fs.FileMode
	modTime time.Time
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
	tr, f, err := openArchive(src)
	if err != nil {
		return "", err
	}
	defer f.Close()
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
	if err := makeDirAll(parent, 0o755); err != nil {
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
	if err := renameNoFollow(tmp, target); err != nil {
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
		r.dirs[""] = restoredAttr{fs.FileMode(hdr.Mode).Perm(), hdr.ModTime}
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
		r.dirs[rel] = restoredAttr{fs.FileMode(hdr.Mode).Perm(), hdr.ModTime}
	case tar.TypeReg:
		// O_EXCL: an existing name, a symbolic link included, is never
		// opened, let alone followed.
		f, err := createFile(full, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return refuse(hdr.Name, "a second entry of that name")
		}
		if err != nil {
			return err
		}
		_, err = io.Copy(f, body)
		if err == nil { // on the file made, never through a name
			err = f.Chmod(fs.FileMode(hdr.Mode).Perm())
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("unpacking %s: %w", hdr.Name, err)
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
	walkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
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
	entries, err := readDir(dir)
	return err == nil && len(entries) == 0
}
