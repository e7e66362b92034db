package main

// This file decodes the JSON strings the scanner (jsonscan.go) measured:
// the one JSON string unescaper of the stream-json reader, for event
// fields, tool inputs and tool result previews alike. The rules are: the
// result is what encoding/json gives (invalid UTF-8 and lone surrogates
// become U+FFFD); a preview is a prefix of the whole string's decoding,
// never cut inside an escape or a character; a string over maxStringBytes
// is kept clipped, and only what is kept is decoded.

import (
	"bytes"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeStr decodes the body of a string scanned by str, as encoding/json
// does. It is the one JSON string unescaper: event fields, tool inputs and
// (through decodePrefix) tool result previews all go through it.
func decodeStr(raw []byte, st strStats) string {
	if !st.escapes && utf8.Valid(raw) {
		return string(raw)
	}
	// A Builder, not a []byte: its string is not a second copy (a
	// string near the line cap must not cost its size twice).
	var b strings.Builder
	b.Grow(len(raw))
	valid := utf8.Valid(raw)
	for i := 0; i < len(raw); {
		// A run without escapes is copied whole when it is valid UTF-8.
		n := bytes.IndexByte(raw[i:], '\\')
		if n < 0 {
			n = len(raw) - i
		}
		if valid {
			b.Write(raw[i : i+n])
		} else {
			appendValid(&b, raw[i:i+n])
		}
		i += n
		if i >= len(raw) {
			break
		}
		e := raw[i+1]
		i += 2
		switch e {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4strict(raw[i:])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2 = hex4strict(raw[i+2:])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
		default: // '"', '\\', '/'
			b.WriteByte(e)
		}
	}
	return b.String()
}

// appendValid appends p to b, each byte of an invalid UTF-8 sequence
// written as U+FFFD, as encoding/json does.
func appendValid(b *strings.Builder, p []byte) {
	if utf8.Valid(p) {
		b.Write(p)
		return
	}
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		b.WriteRune(r)
		i += size
	}
}

// decodePrefix decodes the start of the body of a string scanned by str:
// about its first n bytes (prefixCut), a prefix of what decodeStr gives.
func decodePrefix(raw []byte, n int) string {
	raw = raw[:prefixCut(raw, n)]
	return decodeStr(raw, strStats{escapes: bytes.IndexByte(raw, '\\') >= 0})
}

// prefixCut returns where to cut raw, the body of a string scanned by str,
// to keep at most n bytes: n, or before the escape, escaped surrogate pair
// or UTF-8 sequence that n would split (at most 11 bytes before n).
func prefixCut(raw []byte, n int) int {
	if n >= len(raw) {
		return len(raw)
	}
	n = max(n, 0)
	// A valid UTF-8 sequence that starts before n and ends after it is cut
	// before; a stray byte decodes alone anyway.
	for j := n; j > 0 && j > n-utf8.UTFMax; j-- {
		if utf8.RuneStart(raw[j]) {
			break
		}
		if utf8.RuneStart(raw[j-1]) {
			if r, size := utf8.DecodeRune(raw[j-1:]); (r != utf8.RuneError || size > 1) && j-1+size > n {
				n = j - 1
			}
			break
		}
	}
	for i := 0; ; {
		j := bytes.IndexByte(raw[i:n], '\\')
		if j < 0 {
			return n
		}
		p := i + j
		size := 2
		if raw[p+1] == 'u' {
			size = 6
			// A high surrogate goes with the escape after it.
			if r := hex4strict(raw[p+2:]); r >= 0xd800 && r < 0xdc00 && p+8 <= len(raw) && raw[p+6] == '\\' && raw[p+7] == 'u' {
				size = 12
			}
		}
		if p+size > n {
			return p
		}
		i = p + size
	}
}

// decodedLen is the length of decodeStr(raw, st), computed without
// decoding when it can be.
func decodedLen(raw []byte, st strStats) int {
	if !st.surrogates && utf8.Valid(raw) {
		return len(raw) - st.shrink
	}
	return len(decodeStr(raw, st))
}

// maxStringBytes bounds a decoded string: a longer one is kept as
// clip(s, maxStringBytes) gives it, its start and the count of the bytes
// left out. Without it, a line near the line cap would cost its size twice
// (the line and its text) and more (the copies that show it).
const maxStringBytes = 1 << 20

// decodeClipped is clip(decodeStr(raw, st), maxStringBytes), without
// decoding more of a long string than it keeps.
func decodeClipped(raw []byte, st strStats) string {
	if len(raw) <= maxStringBytes {
		return decodeStr(raw, st)
	}
	// Decode a prefix long enough to hold maxStringBytes+1 decoded bytes
	// (escapes shrink), or the whole string.
	var p string
	for k := maxStringBytes + 1; ; k *= 2 {
		p = decodePrefix(raw, k)
		if len(p) > maxStringBytes || k >= len(raw) {
			break
		}
	}
	if len(p) <= maxStringBytes {
		return p // the whole string, short enough
	}
	return clipKnown(p, maxStringBytes, decodedLen(raw, st))
}
