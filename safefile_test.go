package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadRegularFileCap reads a file of exactly the cap whole, and
// refuses one a byte over it.
func TestReadRegularFileCap(t *testing.T) {
	dir := t.TempDir()
	const max = 4096
	for _, size := range []int{0, 1, max - 1, max, max + 1, 3 * max} {
		path := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readRegularFile(path, max)
		if size > max {
			if err == nil || !strings.Contains(err.Error(), "larger than 4 KiB") {
				t.Errorf("size %d: err = %v, want larger than 4 KiB", size, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("size %d: read %d bytes, %v; want all %d", size, len(got), err, size)
		}
		_, fi, err := readRegularFileInfo(path, max)
		if err != nil || fi.Size() != int64(size) || !fi.Mode().IsRegular() || fi.Name() != "f" {
			t.Errorf("size %d: info %v, %v", size, fi, err)
		}
	}
}

// TestReadKernelFileGrows reads a file whose size is not known in advance
// (as /proc's, reported as 0) through as many buffer growths as it takes,
// and stops at the cap without an error.
func TestReadKernelFileGrows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	want := bytes.Repeat([]byte("kernel line\n"), 1000) // 12,000 bytes: over 1,024 many times
	os.WriteFile(path, want, 0o644)
	got, err := readKernelFile(path, 1<<20)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("read %d bytes, %v; want all %d", len(got), err, len(want))
	}
	got, err = readKernelFile(path, 100)
	if err != nil || !bytes.Equal(got, want[:100]) {
		t.Errorf("capped read: %d bytes, %v; want the first 100", len(got), err)
	}
	if _, err := readKernelFile(filepath.Join(t.TempDir(), "none"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestFileKind names each kind of file in the refusals, and refuses every
// one that is not a regular file.
func TestFileKind(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link")
	os.Symlink("/dev/null", link)
	for _, c := range []struct{ path, kind string }{
		{dir, "a directory"},
		{fifo, "a named pipe"},
		{sock, "a socket"},
		{"/dev/null", "a device"},
		{link, "a device"}, // a link is followed to what it names
	} {
		_, err := readRegularFile(c.path, 10)
		if err == nil || !errors.Is(err, errNotRegular) || !strings.HasSuffix(err.Error(), "not a regular file ("+c.kind+")") {
			t.Errorf("readRegularFile(%s) = %v, want not a regular file (%s)", c.path, err, c.kind)
		}
		if _, _, err := openRegular(c.path); err == nil || !strings.Contains(err.Error(), c.kind) {
			t.Errorf("openRegular(%s) = %v, want %s", c.path, err, c.kind)
		}
	}
	fi, err := os.Lstat(link)
	if err != nil || fileKind(fi) != "a symbolic link" {
		t.Errorf("fileKind(lstat of a link) = %q, %v", fileKind(fi), err)
	}
	fi, _ = os.Stat(fifo)
	if got := fileKind(fi); got != "a named pipe" {
		t.Errorf("fileKind(fifo) = %q", got)
	}
	reg := filepath.Join(dir, "reg")
	os.WriteFile(reg, nil, 0o644)
	fi, _ = os.Stat(reg)
	if got := fileKind(fi); got != "a regular file" {
		t.Errorf("fileKind(regular) = %q", got)
	}
}

// TestReadStreamCap reads a stream of exactly the cap, and refuses one a
// byte over it.
func TestReadStreamCap(t *testing.T) {
	for _, n := range []int{0, 99, 100, 101} {
		data, err := readStream(strings.NewReader(strings.Repeat("x", n)), 100)
		if n > 100 {
			if err == nil || err.Error() != "larger than 100 bytes" {
				t.Errorf("%d bytes: %v, want larger than 100 bytes", n, err)
			}
			continue
		}
		if err != nil || len(data) != n {
			t.Errorf("%d bytes: read %d, %v", n, len(data), err)
		}
	}
	if got := tooLargeError(4 << 20).Error(); got != "larger than 4 MiB" {
		t.Errorf("tooLargeError(4 MiB) = %q", got)
	}
}

// TestOpenTerminalRefuses opens only a terminal.
func TestOpenTerminalRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, nil, 0o644)
	if f, err := openTerminal(path); err == nil || !strings.HasSuffix(err.Error(), "not a terminal") {
		t.Errorf("openTerminal(a file) = %v, %v; want not a terminal", f, err)
	}
}

// TestSizeText pins one style for every cap a refusal names: MiB, KiB or
// bytes, never 131072 bytes next to 1 MiB.
func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 4 << 20: "4 MiB", 128 << 10: "128 KiB", 1536 << 10: "1536 KiB", 1000: "1000 bytes", 0: "0 bytes"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
	if err := tooLargeError(maxAnswer * 2); !errors.Is(err, errTooLarge) || err.Error() != "larger than 128 KiB" {
		t.Errorf("tooLargeError = %v, want larger than 128 KiB", err)
	}
}

// TestOwnFileNoFollow: openOwnFile and readOwnFile read a regular file,
// and refuse a link at its name (to a regular file or dangling), a FIFO
// and a directory, naming what is there; readRegularFile follows the link
// to a regular file but names a dangling one, not as a missing file.
func TestOwnFileNoFollow(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(at("plain"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(at("plain"), at("link"))
	os.Symlink(at("nowhere"), at("dangling"))
	syscall.Mkfifo(at("fifo"), 0o644)
	os.Mkdir(at("dir"), 0o755)
	if data, err := readOwnFile(at("plain"), 10); err != nil || string(data) != "ok\n" {
		t.Errorf("readOwnFile(plain) = %q, %v", data, err)
	}
	if data, err := readOwnFile(at("plain"), 3); err != nil || string(data) != "ok\n" {
		t.Errorf("readOwnFile(plain, its size) = %q, %v; want it read", data, err)
	}
	if _, err := readOwnFile(at("plain"), 2); err == nil || !strings.Contains(err.Error(), "larger than 2 bytes") {
		t.Errorf("readOwnFile(plain, 2) = %v; want larger than 2 bytes", err)
	}
	for name, want := range map[string]string{"link": "(a symbolic link to " + at("plain") + ")", "dangling": "(a symbolic link to " + at("nowhere") + ")", "fifo": "(a named pipe)", "dir": "(a directory)"} {
		f, _, err := openOwnFile(at(name))
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, errNotRegular) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("openOwnFile(%s) = %v; want not a regular file %s", name, err, want)
		}
	}
	if _, _, err := openOwnFile(at("missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("openOwnFile(missing) = %v; want not exist", err)
	}
	if data, err := readRegularFile(at("link"), 10); err != nil || string(data) != "ok\n" {
		t.Errorf("readRegularFile(link) = %q, %v; want the target's", data, err)
	}
	if _, err := readRegularFile(at("dangling"), 10); errors.Is(err, os.ErrNotExist) || !strings.HasSuffix(err.Error(), "not a regular file (a symbolic link to "+at("nowhere")+")") {
		t.Errorf("readRegularFile(dangling) = %v; want not a regular file, no missing file", err)
	}
}
