package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneReader fails when a file of the tool (not a test) reads a file any
// other way than through safefile.go: os.ReadFile, os.Open, os.ReadDir,
// ioutil, or os.OpenFile without O_WRONLY.
func TestOneReader(t *testing.T) {
	checkToolCalls(t, "safefile.go", unsafeReads, "reads a file; use safefile.go's readRegularFile, openRegular, readDir, …")
}

// checkToolCalls fails for each call that find finds in the files of the
// tool (not its tests) but except, saying what is wrong with it.
func checkToolCalls(t *testing.T, except string, find func(*ast.File) []*ast.CallExpr, what string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == except {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, bad := range find(f) {
			t.Errorf("%s: %s %s", fset.Position(bad.Pos()), exprString(bad.Fun), what)
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d files; want the package's files", checked)
	}
}

// TestOneReaderCatches makes sure the check sees what it must.
func TestOneReaderCatches(t *testing.T) {
	src := `package main
import ("os"; "io/ioutil")
func f() {
	os.ReadFile("a")
	os.Open("b")
	os.OpenFile("c", os.O_RDWR, 0)
	ioutil.ReadFile("d")
	os.ReadDir("e")
	os.OpenFile("ok", os.O_WRONLY|os.O_CREATE, 0)
	os.OpenRoot("f")
	r.OpenRoot("g")
	filepath.WalkDir("h", nil)
}`
	if got := len(unsafeReads(parseSource(t, src))); got != 8 {
		t.Errorf("unsafeReads found %d reads; want 8", got)
	}
}

// parseSource parses a file's source src.
func parseSource(t *testing.T, src string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// unsafeReads returns the calls in f that read a file directly.
func unsafeReads(f *ast.File) []*ast.CallExpr {
	var bad []*ast.CallExpr
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "OpenRoot" || sel.Sel.Name == "OpenInRoot") {
			// os.OpenRoot, os.OpenInRoot, a Root's OpenRoot: they open a
			// directory as a file, and a FIFO in its place blocks them
			// (tryout6 #1); openRootDir and openRootBelow do not.
			bad = append(bad, call)
			return true
		}
		switch exprString(call.Fun) {
		case "os.ReadFile", "os.Open", "os.ReadDir", "ioutil.ReadFile", "ioutil.ReadDir", "ioutil.ReadAll",
			"filepath.WalkDir", "filepath.Walk", "filepath.Glob", "os.DirFS", "os.CopyFS":
			bad = append(bad, call)
		case "os.OpenFile":
			if len(call.Args) < 2 || !strings.Contains(exprString(call.Args[1]), "O_WRONLY") {
				bad = append(bad, call)
			}
		}
		return true
	})
	return bad
}

// exprString renders a selector or binary expression of identifiers.
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.BinaryExpr:
		return exprString(e.X) + e.Op.String() + exprString(e.Y)
	case *ast.ParenExpr:
		return exprString(e.X)
	}
	return "?"
}

// TestShownFilesNoFollow fails when a file that shows or streams the
// files a run writes in its workspace (its events, logs, history, run
// state) reads any file with a reader that follows a link at its name
// (openRegular, readRegularFile): the agent may put a link to a file of
// the user's there (tryout4 #3), and only openOwnFile and readOwnFile
// refuse one. cmd_serve.go's token lives outside any workspace.
func TestShownFilesNoFollow(t *testing.T) {
	var files []string
	for _, pattern := range []string{"serve*.go", "cmd_logs.go", "cmd_watch*.go", "runview.go", "events*.go", "historyscan.go", "runstate.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				switch fn := exprString(call.Fun); fn {
				case "openRegular", "readRegularFile", "readRegularFileInfo", "readRegularStat":
					t.Errorf("%s calls %s, which follows a link; use openOwnFile or readOwnFile", name, fn)
				}
			}
			return true
		})
	}
	if checked < 8 {
		t.Fatalf("checked %d files; want serve's, logs', watch's, …", checked)
	}
}
