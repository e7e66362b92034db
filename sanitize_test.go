package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestSanitizeHiddenControls: every C1 control and bidirectional control
// is written out, alone or in clean text, by sanitize, sanitizeString and
// the fast check needsSanitizing alike; the characters next to them pass.
func TestSanitizeHiddenControls(t *testing.T) {
	var hidden []rune
	for r := rune(0x80); r <= 0x9f; r++ {
		hidden = append(hidden, r)
	}
	hidden = append(hidden, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069)
	for _, r := range hidden {
		for _, in := range []string{string(r), "clean text " + string(r) + " more"} {
			want := fmt.Sprintf(`\u%04x`, r)
			if !needsSanitizing([]byte(in)) {
				t.Errorf("needsSanitizing(%q) = false", in)
			}
			for _, got := range []string{string(sanitize([]byte(in))), sanitizeString(in)} {
				if strings.ContainsRune(got, r) || !strings.Contains(got, want) {
					t.Errorf("sanitized %q = %q; want %s written out", in, got, want)
				}
			}
		}
	}
	for _, r := range []rune{0xa0, 0x2029, 0x202f, 0x2065, 0x206a, 'é', '✓'} {
		if in := "a" + string(r) + "b"; needsSanitizing([]byte(in)) || sanitizeString(in) != in {
			t.Errorf("%q (U+%04X) was changed", in, r)
		}
	}
}
