package main

import (
	"encoding/json"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// A line the fast path hands to encoding/json (a key twice, a field of an
// unexpected type) has its long strings clipped before encoding/json sees
// it: the event is the one encoding/json gives, with each long string
// clipped as decodeClipped clips (its shown part and "N more bytes" adding
// up to its decoded length), and the decode allocates far less than the
// line.
func TestDecodeEventLongStringsLeftToStd(t *testing.T) {
	// 3 MiB of text with escapes, a lone surrogate and invalid UTF-8: its
	// decoded length is not its raw length.
	unit := `abc\n\"é\u00e9\ud800` + "\xff" + `xyz `
	body := strings.Repeat(unit, 3*maxStringBytes/len(unit))
	var full string
	if err := json.Unmarshal([]byte(`"`+body+`"`), &full); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{
		"text given twice":   `{"type":"assistant","message":{"content":[{"type":"text","text":"x","text":"` + body + `"}]}}`,
		"result, a bad type": `{"type":"result","subtype":"success","num_turns":"two","total_cost_usd":0.5,"result":"` + body + `"}`,
		"plain content":      `{"type":"user","message":{"content":"` + body + `"},"type":"user"}`,
	}
	more := regexp.MustCompile(`… \((\d+) more bytes\)$`)
	for name, line := range lines {
		t.Run(name, func(t *testing.T) {
			if _, ok := decodeEventFast([]byte(line)); ok {
				t.Fatal("the fast path took the line; the test wants one it hands back")
			}
			e, err := decodeEvent([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			var got string
			switch e.Type {
			case "result":
				if e.Result == nil || e.TotalCostUSD == nil || *e.TotalCostUSD != 0.5 || e.Subtype != "success" || e.badField != "num_turns" {
					t.Fatalf("result event = %+v; want its other fields kept", e)
				}
				got = *e.Result
			default:
				if e.Message == nil || len(e.Message.Content) != 1 {
					t.Fatalf("event = %+v; want one block", e)
				}
				got = e.Message.Content[0].Text
			}
			m := more.FindStringSubmatch(got)
			if m == nil {
				t.Fatalf("text ends %q; want it clipped", got[max(len(got)-40, 0):])
			}
			shown := strings.TrimSuffix(got, m[0])
			n, _ := strconv.Atoi(m[1])
			if !strings.HasPrefix(full, shown) || len(shown)+n != len(full) || got != clip(full, maxStringBytes) {
				t.Errorf("shown %d bytes + %d more; want a prefix of the %d decoded bytes, adding up, clipped as clip does", len(shown), n, len(full))
			}
		})
	}
}

func TestDecodeEventLongStringsMemory(t *testing.T) {
	// 48 MiB strings: plain, and invalid UTF-8 (each byte decodes to the
	// 3 bytes of U+FFFD: its decoded length is measured, not decoded
	// whole); on the fast path, and left to encoding/json (a key twice).
	for name, body := range map[string]string{"plain": strings.Repeat("y", 48<<20), "invalid UTF-8": strings.Repeat("\xff", 48<<20)} {
		for path, line := range map[string]string{
			"fast":          `{"type":"assistant","message":{"content":[{"type":"text","text":"` + body + `"}]}}`,
			"encoding/json": `{"type":"assistant","message":{"content":[{"type":"text","text":"x","text":"` + body + `"}]}}`,
		} {
			data := []byte(line)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			e, err := decodeEvent(data)
			runtime.ReadMemStats(&after)
			if err != nil || len(e.Message.Content) != 1 {
				t.Fatalf("%s, %s: decodeEvent: %v, %+v", name, path, err, e)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(line)/2) {
				t.Errorf("%s, %s: decoding a %d MiB line allocated %d MiB; want under half the line (decoding the string whole costs its size or more)", name, path, len(line)>>20, alloc>>20)
			}
		}
	}
}

// Long strings that are keys, or in a line that is not JSON, change
// nothing: a malformed line is as malformed as before.
func TestClipLongStringsEdges(t *testing.T) {
	long := strings.Repeat("k", maxStringBytes+1)
	bad := `{"type":"x","text":"` + long
	if got, _ := clipLongStrings([]byte(bad)); string(got) != bad {
		t.Errorf("an unterminated line was rewritten")
	}
	if _, err := decodeEvent([]byte(bad)); err == nil {
		t.Errorf("an unterminated line decoded")
	}
	unclosed := `{"type":"x","text":"` + long + `"`
	if _, err := decodeEvent([]byte(unclosed)); err == nil {
		t.Errorf("an unclosed object decoded once its long string was clipped")
	}
	short := `{"type":"x","text":"` + strings.Repeat("s", maxStringBytes) + `"}`
	if got, kept := clipLongStrings([]byte(short)); string(got) != short || kept != nil {
		t.Errorf("a line without long strings was rewritten")
	}
	key := `{"type":"assistant","type":"assistant","` + long + `":1,"message":{"content":[]}}`
	e, err := decodeEvent([]byte(key))
	if err != nil || e.Type != "assistant" {
		t.Errorf("a long key: %v, %+v", err, e)
	}
}

// TestClipMarkerShorter: clip never hides less than its marker takes.
func TestClipMarkerShorter(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abcdefgh", 6, "abcdefgh"}, // two bytes hidden by a 17-byte marker: kept
		{strings.Repeat("x", 40), 10, strings.Repeat("x", 10) + "… (30 more bytes)"},
		{strings.Repeat("x", 26), 10, strings.Repeat("x", 7) + "… (19 more bytes)"}, // 16 hidden: cut earlier
	} {
		if got := clip(tc.s, tc.n); got != tc.want {
			t.Errorf("clip(%q, %d) = %q; want %q", tc.s, tc.n, got, tc.want)
		}
		if got := clip(tc.s, tc.n); len(got) > len(tc.s) {
			t.Errorf("clip(%q, %d) = %q: its marker is longer than what it hides", tc.s, tc.n, got)
		}
	}
}
