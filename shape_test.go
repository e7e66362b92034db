package main

// The rules of the code's shape (SPEC.md §1), checked on every test run:
// no file of the shipped binary is over maxFileLines lines; no type with
// six or more methods has more than 20 plain fields, or methods in more
// than three files; no func init.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const maxFileLines = 600

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
		if n := strings.Count(string(src), "\n"); n > maxFileLines {
			t.Errorf("%s has %d lines; the most is %d: split it by concern", name, n, maxFileLines)
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
