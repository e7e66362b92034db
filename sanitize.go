package main

// This file keeps the agent from driving the terminal. The rules are: text
// that reaches the screen — the agent's text and tool output, its stderr,
// anything quoted from them in a message — is shown with its control
// characters and escape sequences written out ("\x1b[?1049h"), never
// executed, so that no agent can switch the terminal to the alternate
// screen, hide the cursor, retitle the window, turn on mouse reporting or
// plant a hyperlink; the log keeps the raw bytes. Newlines and tabs pass;
// a carriage return before a newline is dropped (CRLF text); C1 controls
// (U+0080–U+009F, which a UTF-8 terminal may obey like ESC [), the
// bidirectional overrides that reorder what is shown, and invalid UTF-8 are
// written out too. What encoding/json writes is still the same JSON once
// sanitized (it escapes the ASCII controls but DEL, which is written out as
// \u007f, as are the C1 and bidirectional controls).

import (
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// writtenOut is the sanitizer's rule, the one place it is written: it
// reports whether the character at the start of p (p is not empty) is
// written out rather than shown, and its length: an ASCII control other
// than newline and tab (a carriage return included, see sanitize), DEL, a
// C1 control or bidirectional control (isHiddenControl), or a byte of
// invalid UTF-8 (size 1).
func writtenOut(p []byte) (out bool, r rune, size int) {
	if b := p[0]; b < utf8.RuneSelf {
		return b < 0x20 && b != '\n' && b != '\t' || b == 0x7f, rune(b), 1
	}
	r, size = utf8.DecodeRune(p)
	return r == utf8.RuneError && size == 1 || isHiddenControl(r), r, size
}

// needsSanitizing reports whether p holds anything sanitize would change;
// it is the fast path, for the common clean line.
func needsSanitizing(p []byte) bool {
	for i := 0; i < len(p); {
		if b := p[i]; b >= 0x20 && b < 0x7f {
			i++
			continue
		}
		out, _, size := writtenOut(p[i:])
		if out {
			return true
		}
		i += size
	}
	return false
}

// sanitize returns p with control characters and escape sequences written
// out; p itself when there are none.
func sanitize(p []byte) []byte {
	if !needsSanitizing(p) {
		return p
	}
	out := make([]byte, 0, len(p)+16)
	for i := 0; i < len(p); {
		esc, r, size := writtenOut(p[i:])
		switch {
		case !esc:
			out = append(out, p[i:i+size]...)
		case r == '\r' && i+1 < len(p) && p[i+1] == '\n':
			// CRLF: the newline is enough.
		case r == '\r':
			out = append(out, `\r`...)
		case r == 0x7f:
			// as JSON writes it: the JSON of a --json output stays JSON
			out = append(out, `\u007f`...)
		case r < utf8.RuneSelf || size == 1:
			out = fmt.Appendf(out, `\x%02x`, p[i])
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
	}
	return out
}

// sanitizeString is sanitize for strings.
func sanitizeString(s string) string {
	if !needsSanitizing([]byte(s)) {
		return s
	}
	return string(sanitize([]byte(s)))
}

// isHiddenControl reports whether r is a C1 control or a bidirectional
// embedding, override or isolate.
func isHiddenControl(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// stripControls returns s without the characters sanitize writes out, for
// text kept where others show it raw later (a commit message, which git
// log prints as it is; a pull request's title): newlines and tabs stay;
// control characters (an escape sequence's ESC and BEL, a carriage
// return), C1 and bidirectional controls and bytes of invalid UTF-8 go.
func stripControls(s string) string {
	p := []byte(s)
	if !needsSanitizing(p) {
		return s
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		drop, _, size := writtenOut(p[i:])
		if !drop {
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	return string(out)
}

// sanitizingWriter writes to w what it is given, sanitized: the output of
// a command whose report quotes what the agent wrote (status), whole.
type sanitizingWriter struct{ w io.Writer }

func (s sanitizingWriter) Write(p []byte) (int, error) {
	if _, err := s.w.Write(sanitize(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// screenWriter is sanitizingWriter for a command's whole output (cli.go
// gives it to every command that draws no panel, so that no path or name it
// prints drives the terminal): a character cut in two between writes (at a
// buffer's edge) is kept for the next write and sanitized whole; flush
// writes what is left at the end.
type screenWriter struct {
	w     io.Writer
	carry []byte
}

func (s *screenWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(s.carry) > 0 {
		p = append(s.carry, p...)
		s.carry = nil
	}
	if k := unfinishedRune(p); k > 0 {
		s.carry = append([]byte(nil), p[len(p)-k:]...)
		p = p[:len(p)-k]
	}
	if len(p) == 0 {
		return n, nil
	}
	if _, err := s.w.Write(sanitize(p)); err != nil {
		return 0, err
	}
	return n, nil
}

// flush writes a character left unfinished at the end, written out.
func (s *screenWriter) flush() {
	if len(s.carry) > 0 {
		s.w.Write(sanitize(s.carry))
		s.carry = nil
	}
}

// unfinishedRune returns the length of the start of a UTF-8 character that
// p ends with, 0 when p ends with a whole one (or with bytes that start
// none).
func unfinishedRune(p []byte) int {
	for k := 1; k <= 3 && k <= len(p); k++ {
		b := p[len(p)-k]
		if b < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(b) {
			if utf8.FullRune(p[len(p)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}

// terminalBehind returns the file a command's output goes to, through the
// screenWriter cli.go puts before it, when it is one (nil otherwise): the
// file a table asks its terminal's width.
func terminalBehind(w io.Writer) *os.File {
	if s, ok := w.(*screenWriter); ok {
		w = s.w
	}
	f, _ := w.(*os.File)
	return f
}
