package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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

// TestStripControls pins the commit message's rule: control characters,
// C1 and bidirectional controls and invalid UTF-8 go; newlines, tabs and
// the rest of the text stay.
func TestStripControls(t *testing.T) {
	checkStrings(t, "stripControls", stripControls, map[string]string{
		"plain":                             "plain",
		"subject\n\nbody\tline\n":           "subject\n\nbody\tline\n",
		"x \x1b]0;PWN\x07\x1b[2J y":         "x ]0;PWN[2J y",
		"crlf\r\nline":                      "crlf\nline",
		"c1 \u009b2J bidi \u202eevil\u2066": "c1 2J bidi evil",
		"bad \xff utf-8 é":                  "bad  utf-8 é",
	})
}

// TestReportSanitizes: an error and its hint may quote the agent; report
// writes them out sanitized, and the writer says the whole was written.
func TestReportSanitizes(t *testing.T) {
	var out, errOut bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errOut}
	report(env, lookupCommand("answer"), withHint(errors.New("the agent now asks: \x1b]0;PWN\x07?"), "answer \u009b2J"))
	want := "claude-iterate: the agent now asks: \\x1b]0;PWN\\x07?\nclaude-iterate: hint: answer \\u009b2J\n"
	if errOut.String() != want {
		t.Errorf("report wrote %q, want %q", errOut.String(), want)
	}
	if n, err := (sanitizingWriter{&out}).Write([]byte("\x1b[31m")); n != 5 || err != nil {
		t.Errorf("sanitizingWriter.Write = %d, %v; want 5, nil", n, err)
	}
}

// TestScreenWriter: a command's whole output is sanitized with a character
// cut between two writes kept whole (a bufio or tabwriter buffer's edge),
// a character left unfinished at the end written out by flush, and JSON
// still the same JSON (DEL as \u007f).
func TestScreenWriter(t *testing.T) {
	var out bytes.Buffer
	w := &screenWriter{w: &out}
	for _, p := range []string{"a \xe2", "\x96", "\x81 b\x1b[31m ", "\"d\x7fel\" \xf0\x9f"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	w.flush()
	if want := `a ▁ b\x1b[31m "d\u007fel" \xf0\x9f`; out.String() != want {
		t.Errorf("screenWriter wrote %q, want %q", out.String(), want)
	}
	var v string
	if err := json.Unmarshal(sanitize([]byte("\"d\x7fel \u009b\u202e\"")), &v); err != nil || v != "d\x7fel \u009b\u202e" {
		t.Errorf("sanitized JSON reads back as %q, %v", v, err)
	}
}

// TestLogOutLongLine: on a screen, logs holds back at most logsLineMax of a
// line not ended yet (a run of NULs in a log the agent put there was held
// whole: tryout8 A), and never cuts a character in two.
func TestLogOutLongLine(t *testing.T) {
	var b bytes.Buffer
	o := &logOut{w: bufio.NewWriter(&b), screen: true}
	line := bytes.Repeat([]byte("é\x00"), logsLineMax) // 3 bytes each
	o.Write(line)
	if len(o.partial) > logsLineMax {
		t.Fatalf("held back %d bytes, want at most %d", len(o.partial), logsLineMax)
	}
	o.finish()
	if want := string(sanitize(line)); b.String() != want {
		t.Fatalf("written %d bytes, not the sanitized line (%d bytes)", b.Len(), len(want))
	}
	// A character cut by the write's end waits for the rest of it.
	b.Reset()
	o = &logOut{w: bufio.NewWriter(&b), screen: true}
	long := append(bytes.Repeat([]byte("a"), logsLineMax), "é"[0])
	o.Write(long)
	o.Write([]byte("é"[1:] + "\n"))
	o.finish()
	if want := strings.Repeat("a", logsLineMax) + "é\n"; b.String() != want {
		t.Fatalf("a character cut in two: %q", b.String()[logsLineMax-2:])
	}
}
