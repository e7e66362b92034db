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
// written out too.

import (
	"fmt"
	"io"
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
