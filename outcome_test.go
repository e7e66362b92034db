package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkOutcome measures judging an iteration from its events, on every
// fixture: "judge" observes decoded events and asks failed, usageLimit,
// fatal and denials; "decode" also decodes the lines, as the stream reader
// does without the transcript.
func BenchmarkOutcome(b *testing.B) {
	files, err := filepath.Glob("testdata/fixtures/*.ndjson")
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixtures: %v", err)
	}
	var streams [][][]byte      // lines per fixture
	var events [][]*streamEvent // decoded events per fixture
	size := 0
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		size += len(data)
		var lines [][]byte
		var evs []*streamEvent
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			lines = append(lines, line)
			if e, err := decodeEvent(line); err == nil {
				evs = append(evs, e)
			}
		}
		streams, events = append(streams, lines), append(events, evs)
	}
	now := time.Unix(1795290000, 0)
	judge := func(o *iterationOutcome) {
		o.finish(nil, "")
		o.failed()
		o.usageLimit(now)
		o.fatal()
		o.denials()
	}
	b.Run("judge", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, evs := range events {
				o := &iterationOutcome{}
				for _, e := range evs {
					o.observe(e)
				}
				judge(o)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, lines := range streams {
				o := &iterationOutcome{}
				for _, line := range lines {
					if e, err := decodeEvent(line); err == nil {
						o.observe(e)
					}
				}
				judge(o)
			}
		}
	})
}

// TestStderrCause pins the cause quoted from an agent's stderr: a
// command-line parser's error line over its usage and tips (codex's clap),
// the last meaningful line otherwise.
func TestStderrCause(t *testing.T) {
	checkStrings(t, "stderrCause", stderrCause, map[string]string{
		"":         "",
		"\n  \n":   "",
		"boom\n":   "boom",
		"a\nb\n\n": "b",
		"error: unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a value, use '-- --bogus'\n\nUsage: codex exec [OPTIONS] [PROMPT]\n\nFor more information, try '--help'.\n": "error: unexpected argument '--bogus' found",
		"Error: x\n    at f (a.js:1:1)\n\nNode.js v22.3.0\n": "Error: x",
		"bad \x1b]0;title\a\n":                               `bad \x1b]0;title\x07`,
	})
}
