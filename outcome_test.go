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
