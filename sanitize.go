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
	"unicode/utf8"
)

// needsSanitizing reports whether p holds anything sanitize would change;
// it is the fast path, for the common clean line.
func needsSanitizing(p []byte) bool {
	high := false
	for i, b := range p {
		switch {
		case b < 0x20 && b != '\n' && b != '\t', b == 0x7f:
			return true
		case b == 0xc2 && i+1 < len(p) && p[i+1] >= 0x80 && p[i+1] <= 0x9f:
			return true // a C1 control
		case b == 0xe2 && i+2 < len(p) && ((p[i+1] == 0x80 && p[i+2] >= 0xaa && p[i+2] <= 0xae) || (p[i+1] == 0x81 && p[i+2] >= 0xa6 && p[i+2] <= 0xa9)):
			return true // a bidirectional control
		case b >= 0x80:
			high = true
		}
	}
	return high && !utf8.Valid(p)
}

// sanitize returns p with control characters and escape sequences written
// out; p itself when there are none.
func sanitize(p []byte) []byte {
	if !needsSanitizing(p) {
		return p
	}
	out := make([]byte, 0, len(p)+16)
	for i := 0; i < len(p); {
		b := p[i]
		if b < 0x80 {
			switch {
			case b == '\r' && i+1 < len(p) && p[i+1] == '\n':
				// CRLF: the newline is enough.
			case b == '\r':
				out = append(out, `\r`...)
			case b < 0x20 && b != '\n' && b != '\t', b == 0x7f:
				out = fmt.Appendf(out, `\x%02x`, b)
			default:
				out = append(out, b)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, `\x%02x`, b)
		case isHiddenControl(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[i:i+size]...)
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
