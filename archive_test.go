package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestSplitEntryName(t *testing.T) {
	tests := []struct {
		name string
		want []string // nil: refused
	}{
		{"demo/", []string{"demo"}},
		{"demo", []string{"demo"}},
		{"demo/a/b.txt", []string{"demo", "a", "b.txt"}},
		{"./demo/a", []string{"demo", "a"}},
		{"demo//a/./b", []string{"demo", "a", "b"}},
		{"demo/..a/b..", []string{"demo", "..a", "b.."}},
		{"demo/a\\..\\b", []string{"demo", "a\\..\\b"}}, // a plain file name on Unix
		{"", nil},
		{".", nil},
		{"./", nil},
		{"/etc/passwd", nil},
		{"//demo/a", nil},
		{"..", nil},
		{"../x", nil},
		{"demo/../x", nil},
		{"demo/a/../../..", nil},
		{"demo/a/..", nil},
		{"demo/a\x00b", nil},
	}
	for _, tt := range tests {
		got, err := splitEntryName(tt.name)
		if tt.want == nil {
			if err == nil {
				t.Errorf("splitEntryName(%q) = %q; want an error", tt.name, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitEntryName(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func FuzzSplitEntryName(f *testing.F) {
	for _, s := range []string{"demo/", "./demo/a", "demo/../x", "/etc", "a//b/./c", "..", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		comps, err := splitEntryName(name)
		if err != nil {
			return
		}
		if len(comps) == 0 || strings.HasPrefix(name, "/") {
			t.Fatalf("splitEntryName(%q) = %q; want an error", name, comps)
		}
		joined := filepath.Join(append([]string{"/root"}, comps...)...)
		if !within("/root", joined) || joined == "/root" {
			t.Fatalf("splitEntryName(%q) = %q: lands at %s, outside /root", name, comps, joined)
		}
	})
}

// makeTree creates files ("f:path"), directories ("d:path") and symbolic
// links ("l:path=target") under a new directory.
func makeTree(t *testing.T, spec ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, s := range spec {
		kind, rest := s[:1], s[2:]
		p, target, _ := strings.Cut(rest, "=")
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch kind {
		case "f":
			err = os.WriteFile(full, []byte(target), 0o644)
		case "d":
			err = os.MkdirAll(full, 0o755)
		case "l":
			err = os.Symlink(target, full)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCheckLinkInside(t *testing.T) {
	root := makeTree(t,
		"f:file", "d:a/b",
		"l:same=file",
		"l:down=a/b",
		"l:dot=.",
		"l:up=..",
		"l:abs=/etc",
		"l:a/parent=..",
		"l:a/b/grandparent=../..",
		"l:a/b/tooHigh=../../..",
		"l:chain=a/parent/..",       // a/parent is the root: .. leaves it
		"l:chain2=down/grandparent", // the root
		"l:chain3=a/b/grandparent/a/parent/../..",
		"l:viaAbs=a/toEtc/passwd", "l:a/toEtc=/etc",
		"l:dangling=missing/x",
		"l:danglingUp=missing/../..",
		"l:loop1=loop2", "l:loop2=loop1",
		"l:selfdir=a/../a/b",
	)
	tests := []struct {
		link string
		ok   bool
	}{
		{"same", true},
		{"down", true},
		{"dot", true},
		{"up", false},
		{"abs", false},
		{"a/parent", true},
		{"a/b/grandparent", true},
		{"a/b/tooHigh", false},
		{"chain", false},
		{"chain2", true},
		{"chain3", false},
		{"viaAbs", false},
		{"dangling", true},
		{"danglingUp", false},
		{"loop1", false},
		{"selfdir", true},
	}
	for _, tt := range tests {
		err := checkLinkInside(root, tt.link)
		if (err == nil) != tt.ok {
			t.Errorf("checkLinkInside(%s) = %v; want ok %v", tt.link, err, tt.ok)
		}
	}
}

// writeTestArchive writes a .tar.gz of entries: "d:NAME", "f:NAME=CONTENT",
// "f:NAME@FILE" (content from FILE, read by content), "l:NAME=TARGET" or
// "h:NAME=TARGET" (a hard link).
func writeTestArchive(path string, entries []string, content func(string) ([]byte, error)) error {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		if len(e) < 3 || e[1] != ':' {
			return fmt.Errorf("bad entry %q: want d:NAME, f:NAME=CONTENT, f:NAME@FILE, l:NAME=TARGET or h:NAME=TARGET", e)
		}
		kind, rest := e[0], e[2:]
		name, value, hasValue := strings.Cut(rest, "=")
		hdr := &tar.Header{Name: name, Mode: 0o644, ModTime: time.Unix(1700000000, 0)}
		var body []byte
		switch kind {
		case 'd':
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		case 'f':
			hdr.Typeflag = tar.TypeReg
			if n, file, ok := strings.Cut(rest, "@"); ok && !hasValue {
				data, err := content(file)
				if err != nil {
					return err
				}
				hdr.Name, body = n, data
			} else {
				body = []byte(value)
			}
			hdr.Size = int64(len(body))
		case 'l':
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, value
		case 'h':
			hdr.Typeflag, hdr.Linkname = tar.TypeLink, value
		default:
			return fmt.Errorf("bad entry %q", e)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

const testMetadata = `{"name": "demo", "mode": "loop", "created": "2025-01-01T00:00:00Z", "status": "completed", "iterations": 3}`

func TestRestoreRefusals(t *testing.T) {
	meta := "f:demo/.metadata.json=" + testMetadata
	tests := []struct {
		name    string
		entries []string
		want    string // in the error; "" for a restore that succeeds
	}{
		{"ok", []string{"d:demo/", meta, "d:demo/sub/", "f:demo/sub/x=1", "l:demo/l=sub/x", "l:demo/sub/up=.."}, ""},
		{"implicit dirs", []string{meta, "f:demo/a/b/c=1"}, ""},
		{"traversal", []string{"d:demo/", meta, "f:demo/../../evil=x"}, `".."`},
		{"absolute", []string{"d:demo/", meta, "f:/tmp/evil=x"}, "absolute path"},
		{"other top", []string{"d:demo/", meta, "f:other/x=1"}, "outside the archive's directory"},
		{"link out", []string{"d:demo/", meta, "l:demo/out=../../x"}, "leads out of the workspace"},
		{"absolute link", []string{"d:demo/", meta, "l:demo/etc=/etc"}, "absolute path"},
		{"chained link out", []string{"d:demo/", meta, "d:demo/a/", "l:demo/a/up=..", "l:demo/esc=a/up/.."}, "leads out of the workspace"},
		{"forward link out", []string{"d:demo/", meta, "l:demo/esc=later/..", "l:demo/later=.."}, "leads out of the workspace"},
		{"through a link", []string{"d:demo/", meta, "d:demo/sub/", "l:demo/in=sub", "f:demo/in/x=1"}, "through the symbolic link"},
		{"through a link out", []string{"d:demo/", meta, "l:demo/out=../../outside", "f:demo/out/pwned=1"}, "through the symbolic link"},
		{"duplicate file", []string{"d:demo/", meta, "f:demo/a=1", "f:demo/a=2"}, "second entry"},
		{"file over link", []string{"d:demo/", meta, "l:demo/a=b", "f:demo/a=2"}, "second entry"},
		{"dir over file", []string{"d:demo/", meta, "f:demo/a=1", "d:demo/a/"}, "in the place of"},
		{"hard link", []string{"d:demo/", meta, "h:demo/h=demo/.metadata.json"}, "hard link"},
		{"root not a dir", []string{"f:demo=1"}, "not a directory"},
		{"no metadata", []string{"d:demo/", "f:demo/x=1"}, "holds no workspace"},
		{"empty", nil, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "a.tar.gz")
			if err := writeTestArchive(src, tt.entries, nil); err != nil {
				t.Fatal(err)
			}
			parent := filepath.Join(dir, "ws")
			target := filepath.Join(parent, "demo")
			_, err := restoreArchive(src, target)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("restoreArchive = %v; want success", err)
				}
				if _, err := os.Stat(filepath.Join(target, metadataFile)); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("restoreArchive = %v; want an error with %q", err, tt.want)
			}
			// Nothing is left: no target, no temporary directory, not
			// even the directory made to hold them.
			all, _ := os.ReadDir(dir)
			if len(all) != 1 {
				var names []string
				for _, e := range all {
					names = append(names, e.Name())
				}
				t.Errorf("left behind in %s: %q; want only a.tar.gz", dir, names)
			}
		})
	}
}

func TestArchiveRoundTrip(t *testing.T) {
	ws := makeTree(t,
		"f:.metadata.json="+testMetadata,
		"f:INSTRUCTIONS.md=do it\n",
		"f:logs/iterate-1.log=log\n",
		"d:empty",
		"l:logs/latest=iterate-1.log",
		"l:dangling=nowhere",
	)
	if err := os.Chmod(filepath.Join(ws, "INSTRUCTIONS.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(ws, "empty"), 0o555); err != nil {
		t.Fatal(err)
	}
	archives := t.TempDir()
	info, err := writeArchive(ws, "demo", archives, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := filepath.Base(info.path), "demo-20250102T030405Z.tar.gz"; got != want {
		t.Errorf("archive name = %s; want %s", got, want)
	}
	if info.files != 3 || len(info.skipped) != 0 || len(info.outward) != 0 {
		t.Errorf("archive info = %+v; want 3 files, nothing skipped or outward", info)
	}
	// The head files come first.
	names := archiveNames(t, info.path)
	if want := []string{"demo/", "demo/.metadata.json", "demo/INSTRUCTIONS.md"}; !reflect.DeepEqual(names[:3], want) {
		t.Errorf("first entries = %q; want %q", names[:3], want)
	}
	// A second archive within the same second gets a counter.
	info2, err := writeArchive(ws, "demo", archives, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := filepath.Base(info2.path), "demo-20250102T030405Z-2.tar.gz"; got != want {
		t.Errorf("second archive name = %s; want %s", got, want)
	}
	if got := latestArchive(archives, "demo"); got != info2.path {
		t.Errorf("latestArchive = %s; want %s", got, info2.path)
	}

	target := filepath.Join(t.TempDir(), "restored")
	top, err := restoreArchive(info.path, target)
	if err != nil {
		t.Fatal(err)
	}
	if top != "demo" {
		t.Errorf("top = %q; want demo", top)
	}
	if err := compareTrees(ws, target); err != nil {
		t.Error(err)
	}
	a, err := openArchived(info.path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if a.ws.Name != "demo" || a.ws.meta.Iterations != 3 || !a.at.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("openArchived = %s, %d iterations, at %s", a.ws.Name, a.ws.meta.Iterations, a.at)
	}
}

// archiveNames lists the entries of a .tar.gz.
func archiveNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, hdr.Name)
	}
	return names
}

// compareTrees compares two directory trees: the same names, types,
// permissions, file contents and link targets.
func compareTrees(a, b string) error {
	list := func(root string) (map[string]fs.FileInfo, error) {
		out := map[string]fs.FileInfo{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel] = fi
			return nil
		})
		return out, err
	}
	la, err := list(a)
	if err != nil {
		return err
	}
	lb, err := list(b)
	if err != nil {
		return err
	}
	var names []string
	for n := range la {
		names = append(names, n)
	}
	for n := range lb {
		if _, ok := la[n]; !ok {
			return fmt.Errorf("%s is only in %s", n, b)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fa, fb := la[n], lb[n]
		if fb == nil {
			return fmt.Errorf("%s is only in %s", n, a)
		}
		if fa.Mode().Type() != fb.Mode().Type() || fa.Mode().Perm() != fb.Mode().Perm() {
			return fmt.Errorf("%s: mode %s in %s, %s in %s", n, fa.Mode(), a, fb.Mode(), b)
		}
		switch {
		case fa.Mode()&fs.ModeSymlink != 0:
			ta, _ := os.Readlink(filepath.Join(a, n))
			tb, _ := os.Readlink(filepath.Join(b, n))
			if ta != tb {
				return fmt.Errorf("%s: link to %q in %s, to %q in %s", n, ta, a, tb, b)
			}
		case fa.Mode().IsRegular():
			da, _ := os.ReadFile(filepath.Join(a, n))
			db, _ := os.ReadFile(filepath.Join(b, n))
			if !bytes.Equal(da, db) {
				return fmt.Errorf("%s: contents differ between %s and %s", n, a, b)
			}
			if !fa.ModTime().Truncate(time.Second).Equal(fb.ModTime()) {
				return fmt.Errorf("%s: modified %s in %s, %s in %s", n, fa.ModTime(), a, fb.ModTime(), b)
			}
		}
	}
	return nil
}

// archiveCommands are the testscript commands for archives.
func archiveCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"mktar":   cmdMktar,
		"treecmp": cmdTreecmp,
	}
}

// cmdMktar writes a .tar.gz with the given entries, hostile ones included:
// d:NAME (a directory), f:NAME=CONTENT or f:NAME@FILE (a file),
// l:NAME=TARGET (a symbolic link), h:NAME=TARGET (a hard link).
//
//	mktar OUT ENTRY...
func cmdMktar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: mktar OUT ENTRY...")
	}
	err := writeTestArchive(ts.MkAbs(args[0]), args[1:], func(file string) ([]byte, error) {
		return []byte(ts.ReadFile(file)), nil
	})
	if err != nil {
		ts.Fatalf("mktar: %v", err)
	}
}

// cmdTreecmp asserts that two directory trees hold the same names, types,
// permissions, file contents and times, and link targets.
//
//	treecmp DIR1 DIR2
func cmdTreecmp(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: treecmp DIR1 DIR2")
	}
	if err := compareTrees(ts.MkAbs(args[0]), ts.MkAbs(args[1])); err != nil {
		ts.Fatalf("treecmp: %v", err)
	}
}

// The archive names sort by time, then counter.
func TestLatestArchive(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"demo-20250101T000000Z.tar.gz", "demo-20250102T000000Z.tar.gz", "demo-20250102T000000Z-2.tar.gz", "demo-x-20250103T000000Z.tar.gz", "demo-20250104T000000Z.tar.gz.partial"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := filepath.Base(latestArchive(dir, "demo")), "demo-20250102T000000Z-2.tar.gz"; got != want {
		t.Errorf("latestArchive(demo) = %s; want %s", got, want)
	}
	if got := latestArchive(dir, "nope"); got != "" {
		t.Errorf("latestArchive(nope) = %s; want none", got)
	}
}

// TestRestoreTargetMadeMeanwhile: a workspace that appears at the target
// while the archive is being unpacked (after the check that the target is
// free, before the unpacked tree is moved there) is left as it is, and
// restore says it already exists, as when it was there from the start —
// whether the rename reports EEXIST or ENOTEMPTY. The test moves a
// directory in when the restore's temporary directory appears; a restore
// that finished first (the move then fails) is tried again.
func TestRestoreTargetMadeMeanwhile(t *testing.T) {
	entries := []string{"d:demo/", "f:demo/.metadata.json=" + testMetadata}
	for i := range 400 {
		entries = append(entries, fmt.Sprintf("f:demo/f%d=%d", i, i))
	}
	for attempt := 0; attempt < 20; attempt++ {
		root := t.TempDir()
		src := filepath.Join(root, "demo.tar.gz")
		if err := writeTestArchive(src, entries, nil); err != nil {
			t.Fatal(err)
		}
		parent, target, theirs := filepath.Join(root, "check"), filepath.Join(root, "check", "demo"), filepath.Join(root, "theirs")
		if err := os.MkdirAll(theirs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(theirs, "mine"), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		stop, moved := make(chan struct{}), make(chan bool, 1)
		go func() {
			for {
				select {
				case <-stop:
					moved <- false
					return
				default:
				}
				names, _ := os.ReadDir(parent)
				for _, e := range names {
					if strings.HasPrefix(e.Name(), ".demo.restore-") {
						moved <- os.Rename(theirs, target) == nil
						return
					}
				}
			}
		}()
		var out, errOut bytes.Buffer
		err := runArchiveRestore(&cliEnv{projectRoot: root, stdout: &out, stderr: &errOut}, []string{src, target})
		close(stop)
		if !<-moved {
			continue // the restore moved its tree in first
		}
		if err == nil || !strings.Contains(err.Error(), "workspace "+target+" already exists") {
			t.Fatalf("restore onto a workspace made meanwhile: %v; want it already exists", err)
		}
		if he := (*hintError)(nil); !errors.As(err, &he) || !strings.Contains(he.hint, "restore it under another name") {
			t.Errorf("restore onto a workspace made meanwhile: no hint to restore it under another name (%v)", err)
		}
		if data, err := os.ReadFile(filepath.Join(target, "mine")); err != nil || string(data) != "mine" {
			t.Errorf("the workspace made meanwhile: %q, %v; want it kept", data, err)
		}
		if names, _ := os.ReadDir(parent); len(names) != 1 {
			t.Errorf("%s holds %v; want only demo (the unpacked tree removed)", parent, names)
		}
		return
	}
	t.Fatal("every restore moved its tree in before the test could make the target")
}
