package main

import (
	"go/ast"
	"strings"
	"testing"
)

// TestOneWriter fails when a file of the tool (not a test) writes or
// creates a file any other way than through safewrite.go: os.Create,
// os.CreateTemp, os.WriteFile, os.OpenFile or syscall.Open with a flag that
// writes or creates, os.Rename, os.Truncate, os.MkdirAll (which follows
// links on the way), ioutil's writers.
func TestOneWriter(t *testing.T) {
	checkToolCalls(t, "safewrite.go", unsafeWrites, "writes a file; use safewrite.go's writeFileAtomic, createFile, openFile, makeDirAll, …")
}

// TestOneWriterCatches makes sure the check sees what it must, and lets be
// what it must.
func TestOneWriterCatches(t *testing.T) {
	src := `package main
import ("os"; "io/ioutil"; "syscall")
func f() {
	os.Create("a")
	os.CreateTemp("", "b")
	os.WriteFile("c", nil, 0)
	os.OpenFile("d", os.O_WRONLY|os.O_CREATE, 0)
	os.OpenFile("e", os.O_RDWR, 0)
	os.OpenFile("f", os.O_RDONLY|os.O_TRUNC, 0)
	os.OpenFile("g", flags, 0)
	os.Rename("h", "i")
	os.Truncate("j", 0)
	os.MkdirAll("k", 0)
	ioutil.WriteFile("l", nil, 0)
	ioutil.TempFile("", "m")
	syscall.Open("n", syscall.O_WRONLY|syscall.O_APPEND, 0)
	syscall.Creat("o", 0)
	os.Chmod("p", 0)
	os.Symlink("q", "r")
	os.Chtimes("s", t, t)

	os.OpenFile("ok", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	syscall.Open("ok", syscall.O_RDONLY, 0)
	os.Remove("ok")
	os.Mkdir("ok", 0)
	openTerminal("/dev/tty")
}
func openTerminal(path string) { os.OpenFile(path, os.O_RDWR, 0) }`
	if got := len(unsafeWrites(parseSource(t, src))); got != 17 {
		t.Errorf("unsafeWrites found %d writes; want 17", got)
	}
}

// unsafeWrites returns the calls in f that write or create a file
// directly. openTerminal's open of /dev/tty for reading and writing is a
// terminal's, not a file's.
func unsafeWrites(f *ast.File) []*ast.CallExpr {
	var bad []*ast.CallExpr
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "openTerminal" {
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch exprString(call.Fun) {
			case "os.Create", "os.CreateTemp", "os.WriteFile", "os.Rename", "os.Truncate", "os.MkdirAll",
				"os.Chmod", "os.Chown", "os.Chtimes", "os.Symlink", "os.Link",
				"ioutil.WriteFile", "ioutil.TempFile", "syscall.Creat":
				if !inScratch(d) {
					bad = append(bad, call)
				}
			case "os.OpenFile", "syscall.Open":
				if len(call.Args) < 2 || writesFlag(exprString(call.Args[1])) {
					bad = append(bad, call)
				}
			}
			return true
		})
	}
	return bad
}

// inScratch reports whether d works only in a directory the tool made for
// itself and nobody else knows (mkdtemp): the restorer, which unpacks an
// archive there, checking every directory on the way (restore.go), and the
// dry run's copy of a workspace (dryrun.go). They make directories and
// links, and set modes and times, by path there.
func inScratch(d ast.Decl) bool {
	fd, ok := d.(*ast.FuncDecl)
	if !ok {
		return false
	}
	if fd.Recv != nil && len(fd.Recv.List) == 1 && receiverName(fd.Recv.List[0].Type) == "restorer" {
		return true
	}
	return fd.Recv == nil && (fd.Name.Name == "removeTree" || fd.Name.Name == "copyTree")
}

// writesFlag reports whether an open's flags, as exprString shows them,
// may write or create: any flag it cannot read counts.
func writesFlag(flags string) bool {
	for _, f := range strings.Split(flags, "|") {
		switch f {
		case "os.O_RDONLY", "syscall.O_RDONLY", "syscall.O_NONBLOCK", "syscall.O_CLOEXEC", "syscall.O_DIRECTORY", "syscall.O_NOFOLLOW", "os.O_SYNC":
		default:
			return true
		}
	}
	return false
}
