package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestArchiveLimits: a file over the limit of a file is left out, and so
// is one that would take the archive past its total; the files after it
// that fit still go in. planArchive, which clean asks before its question,
// says the same as the archive written.
func TestArchiveLimits(t *testing.T) {
	ws := makeTree(t,
		"f:.metadata.json="+testMetadata,
		"f:a.txt="+strings.Repeat("a", 60),
		"f:b.txt="+strings.Repeat("b", 60),
		"f:c.txt="+strings.Repeat("c", 201),
		"f:d.txt="+strings.Repeat("d", 60),
		"f:e.txt="+strings.Repeat("e", 10),
	)
	meta := int64(len(testMetadata))
	lim := archiveLimits{file: 200, total: meta + 130}
	want := []leftOutFile{{rel: "c.txt", size: 201}, {rel: "d.txt", size: 60, overTotal: true}}
	plan, err := planArchive(ws, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plan.tooLarge, want) || plan.files != 4 {
		t.Errorf("planArchive: left out %+v, %d files; want %+v, 4 files", plan.tooLarge, plan.files, want)
	}
	info, err := writeArchiveLimited(ws, "demo", t.TempDir(), time.Now(), lim)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(info.tooLarge, want) || info.files != 4 || info.stored != meta+130 {
		t.Errorf("writeArchiveLimited: left out %+v, %d files, %d bytes; want %+v, 4 files, %d bytes", info.tooLarge, info.files, info.stored, want, meta+130)
	}
	names := archiveNames(t, info.path)
	if got, want := strings.Join(names, " "), "demo/ demo/.metadata.json demo/a.txt demo/b.txt demo/e.txt"; got != want {
		t.Errorf("entries = %s; want %s", got, want)
	}
	if got := want[1].reason(lim); !strings.Contains(got, "past") {
		t.Errorf("reason of a file over the total = %q", got)
	}
	if got := want[0].reason(lim); !strings.Contains(got, "200 B an archive takes of a file") {
		t.Errorf("reason of a file over the limit = %q", got)
	}
	// The defaults: the largest log a run writes fits; a 2 GiB file does not.
	d := &archiveInfo{limits: defaultArchiveLimits}
	if d.leaveOut("logs/big.log", logBudget+64<<20) || !d.leaveOut("TODO.md", 2<<30) {
		t.Errorf("default limits %+v: a log just past its budget is left out, or a 2 GiB file kept", defaultArchiveLimits)
	}
}
