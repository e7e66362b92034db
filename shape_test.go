package main

// The rules of the code's shape (SPEC.md §1), checked on every test run:
// every file of the shipped binary says in its header what it is for (one
// concern); a file over maxFileLines lines is split by concern, or its
// header says why it must be longer, and none is over hardMaxFileLines;
// no type with
// six or more methods has more than 20 plain fields, or methods in more
// than three files; no func init.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const (
	maxFileLines     = 600
	hardMaxFileLines = 900
)

// fileLengthRule is what is wrong with the file name of source src, or "":
// a header comment that says what the file holds (its concern), unless it
// is a few declarations (80 lines at most); over
// maxFileLines lines, a header that says why ("longer than 600 lines
// because ..."), never a helper moved to a file with room; never over
// hardMaxFileLines.
func fileLengthRule(name, src string) string {
	header := fileHeader(src)
	n := strings.Count(src, "\n")
	// A file of a few declarations says what it is in their doc comments.
	if header == "" && n > 80 {
		return name + " has no header comment saying what it holds (after the package clause)"
	}
	switch {
	case n > hardMaxFileLines:
		return fmt.Sprintf("%s has %d lines, over %d: split it by concern", name, n, hardMaxFileLines)
	case n > maxFileLines && !strings.Contains(strings.Join(strings.Fields(header), " "), fmt.Sprintf("longer than %d lines because", maxFileLines)):
		return fmt.Sprintf("%s has %d lines: split it by concern, or say in its header why it must be longer (\"It is longer than %d lines because ...\")", name, n, maxFileLines)
	}
	return ""
}

// fileHeader is the comment right after a file's package clause (or, for
// a platform file, the first comment), without its slashes.
func fileHeader(src string) string {
	var b strings.Builder
	started := false
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "//go:build"), strings.HasPrefix(t, "package "), t == "" && !started:
			continue
		case strings.HasPrefix(t, "//"):
			started = true
			b.WriteString(strings.TrimPrefix(t, "//") + "\n")
			continue
		}
		break
	}
	return b.String()
}

func TestCodeShape(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	fields := map[string]int{}
	methodFiles := map[string]map[string]bool{}
	methods := map[string]int{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if msg := fileLengthRule(name, string(src)); msg != "" {
			t.Error(msg)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					if d.Name.Name == "init" {
						t.Errorf("%s: func init: the package has none", fset.Position(d.Pos()))
					}
					continue
				}
				recv := receiverName(d.Recv.List[0].Type)
				methods[recv]++
				if methodFiles[recv] == nil {
					methodFiles[recv] = map[string]bool{}
				}
				methodFiles[recv][name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok {
						continue
					}
					if st, ok := ts.Type.(*ast.StructType); ok {
						n := 0
						for _, fl := range st.Fields.List {
							n += max(len(fl.Names), 1)
						}
						fields[ts.Name.Name] = n
					}
				}
			}
		}
	}
	for typ, n := range methods {
		if n < 6 {
			continue
		}
		if fields[typ] > 20 {
			t.Errorf("type %s has %d methods and %d fields; a type with 6 or more methods has at most 20", typ, n, fields[typ])
		}
		if len(methodFiles[typ]) > 3 {
			var names []string
			for f := range methodFiles[typ] {
				names = append(names, f)
			}
			sort.Strings(names)
			t.Errorf("type %s has methods in %d files (%s); at most 3", typ, len(names), strings.Join(names, ", "))
		}
	}
}

// receiverName is the type name of a method's receiver.
func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// TestChildrenStartedOwn holds every child the tool starts to the reaper's
// rule (reaper.go): a process is started only inside a function passed to
// trackStart (runOwn, outputOwn and startChild go through it), so
// that the reaper never takes the exit status its starter waits for.
func TestChildrenStartedOwn(t *testing.T) {
	// Cmd's Start, Run, Output and CombinedOutput take no argument;
	// os.StartProcess and syscall.ForkExec do.
	noArgs := map[string]bool{"Start": true, "Run": true, "Output": true, "CombinedOutput": true}
	fset, files := parsedSources(t)
	found := 0
	for _, f := range files {
		var inTrack int
		var walk func(n ast.Node) bool
		walk = func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "trackStart" {
				inTrack++
				for _, a := range call.Args {
					ast.Inspect(a, walk)
				}
				inTrack--
				return false
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if name := sel.Sel.Name; noArgs[name] && len(call.Args) == 0 || name == "StartProcess" || name == "ForkExec" {
				found++
				if inTrack == 0 {
					t.Errorf("%s: %s() starts a process outside trackStart: use runOwn or outputOwn (reaper.go)", fset.Position(call.Pos()), sel.Sel.Name)
				}
			}
			return true
		}
		ast.Inspect(f, walk)
	}
	if found < 2 { // startOwn and claudesession.go's os.StartProcess
		t.Errorf("found %d process starts; the check no longer sees them", found)
	}
}

// TestThreadsLiveOn holds every runtime.LockOSThread to a deferred
// runtime.UnlockOSThread in the same function. A goroutine that ends while
// locked ends its OS thread, and a child started from that thread gets its
// parent-death signal (SIGKILL) then: startChild starts children from
// whatever thread it runs on, which is safe only while no thread ends.
func TestThreadsLiveOn(t *testing.T) {
	fset, files := parsedSources(t)
	found := 0
	for _, f := range files {
		isCall := func(n ast.Node, fn string) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return false
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			pkg, ok := sel.X.(*ast.Ident)
			return ok && pkg.Name == "runtime" && sel.Sel.Name == fn
		}
		// Every function body (declared or literal) on its own: a lock in
		// a function literal is the literal's.
		var check func(body *ast.BlockStmt)
		check = func(body *ast.BlockStmt) {
			locks, unlocks := 0, 0
			ast.Inspect(body, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok {
					check(lit.Body)
					return false
				}
				if d, ok := n.(*ast.DeferStmt); ok && isCall(d.Call, "UnlockOSThread") {
					unlocks++
					return false
				}
				if isCall(n, "LockOSThread") {
					locks++
					found++
				}
				return true
			})
			if locks > unlocks {
				t.Errorf("%s: runtime.LockOSThread without a deferred runtime.UnlockOSThread: a goroutine that ends locked ends its thread, and the parent-death signal of every child started from it (startChild)", fset.Position(body.Pos()))
			}
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				check(fd.Body)
			}
		}
	}
	if found == 0 {
		t.Errorf("found no runtime.LockOSThread; the check no longer sees them (raiseHere locks)")
	}
}

// parsedSources parses the files of the shipped binary (not the tests).
func parsedSources(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// TestCodeMap checks that doc.go's code map names every source file of the
// binary, and no file that is not there: a map that forgets a file, or
// points at one that moved, fails here (issue 33: comments pointed at
// files that had moved).
func TestCodeMap(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, name := range files {
		have[name] = true
		if strings.HasSuffix(name, "_test.go") || name == "doc.go" {
			continue
		}
		if !mapNames(text, name) {
			t.Errorf("doc.go's code map does not name %s", name)
		}
	}
	for _, m := range lazyRegexp(`[a-z_]+(_\*)?\.go\b`)().FindAllString(text, -1) {
		if strings.Contains(m, "*") {
			if g, _ := filepath.Glob(m); len(g) == 0 {
				t.Errorf("doc.go names %s, which matches no file", m)
			}
		} else if !have[m] {
			t.Errorf("doc.go names %s, which does not exist", m)
		}
	}
}

// mapNames reports whether the map names file, itself or by a pattern
// such as suspend_*.go.
func mapNames(text, file string) bool {
	for _, m := range lazyRegexp(`\b[a-z_]+(_\*)?\.go\b`)().FindAllString(text, -1) {
		if ok, _ := filepath.Match(m, file); ok || m == file {
			return true
		}
	}
	return false
}
