package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestExcludeBlocksAtOnce adds twenty blocks to one info/exclude at once,
// as twenty workspaces of a repository starting together do: every one
// lands (the update holds the file locked), each once.
func TestExcludeBlocksAtOnce(t *testing.T) {
	exclude := filepath.Join(t.TempDir(), "exclude")
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- addExcludeBlock(exclude, fmt.Sprintf("/ws%d/", i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := addExcludeBlock(exclude, "/ws3/"); err != nil { // there already: unchanged
		t.Fatal(err)
	}
	data, err := readRegularFile(exclude, gitignoreCap)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		begin := fmt.Sprintf("# claude-iterate: the runtime files in /ws%d/\n", i)
		if n := strings.Count(string(data), begin); n != 1 {
			t.Errorf("block of /ws%d/ found %d times; want once", i, n)
		}
	}
}
