package main

// This file reads the strings of the stream-json fast path's scanner
// (jsonscan.go): scanning one (str), and decoding it as encoding/json does
// (decodeStr, the one JSON string unescaper of the tool), whole or its
// first bytes only (decodePrefix). The rules are those of jsonscan.go.

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// strStats describes a string's decoded form, learnt while scanning it.
type strStats struct {
	escapes bool // it has escapes
	// surrogates is set when a \u escape is a UTF-16 surrogate, whose
	// decoded length needs the full decoder.
	surrogates bool
	newlines   int  // decoded newlines
	lastNL     bool // the decoded string ends with a newline
	shrink     int  // raw length minus decoded length, without surrogates or invalid UTF-8
}

// Masks for finding, eight bytes at a time, a byte below 0x20, a quote or
// a backslash (the bytes a string's scan must stop at).
const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialBytes returns, for the eight bytes of w (little-endian), a mask
// whose lowest set bit is the high bit of the first control character,
// quote or backslash, or 0 when there is none. Bits above the lowest may
// be wrong: a borrow crosses only a byte that matched.
func specialBytes(w uint64) uint64 {
	ctl := (w - 0x20*lows) &^ w
	q := w ^ '"'*lows
	q = (q - lows) &^ q
	bs := w ^ '\\'*lows
	bs = (bs - lows) &^ bs
	return (ctl | q | bs) & highs
}

// str reads a string (at its opening quote) and returns its raw body,
// between the quotes, with its stats.
func (s *jsonScanner) str() (raw []byte, st strStats) {
	d := s.data
	if s.i >= len(d) || d[s.i] != '"' {
		s.fail()
		return nil, st
	}
	start := s.i + 1
	i := start
	for {
		// Skip to the next special byte, eight bytes at a time.
		for i+8 <= len(d) {
			m := specialBytes(binary.LittleEndian.Uint64(d[i:]))
			if m == 0 {
				i += 8
				st.lastNL = false
				continue
			}
			if n := bits.TrailingZeros64(m) >> 3; n > 0 {
				i += n
				st.lastNL = false
			}
			break
		}
		if i >= len(d) {
			s.fail()
			return nil, st
		}
		switch c := d[i]; {
		case c == '"':
			s.i = i + 1
			return d[start:i], st
		case c < 0x20:
			s.fail()
			return nil, st
		case c != '\\':
			st.lastNL = false
			i++
			continue
		}
		// An escape.
		if i+1 >= len(d) {
			s.fail()
			return nil, st
		}
		st.escapes = true
		switch d[i+1] {
		case 'n':
			st.newlines++
			st.lastNL = true
			st.shrink++
			i += 2
		case '"', '\\', '/', 'b', 'f', 'r', 't':
			st.lastNL = false
			st.shrink++
			i += 2
		case 'u':
			r := hex4strict(d[i+2:])
			if r < 0 {
				s.fail()
				return nil, st
			}
			st.lastNL = r == '\n'
			if r == '\n' {
				st.newlines++
			}
			if utf16.IsSurrogate(r) {
				st.surrogates = true
			} else {
				st.shrink += 6 - utf8.RuneLen(r)
			}
			i += 6
		default:
			s.fail()
			return nil, st
		}
	}
}

// hex4strict decodes the four hex digits at the start of h, or returns -1.
func hex4strict(h []byte) rune {
	if len(h) < 4 {
		return -1
	}
	var r rune
	for _, c := range h[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

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
			var r rune
			r, i = unicodeEscape(raw, i)
			b.WriteRune(r)
		default: // '"', '\\', '/'
			b.WriteByte(e)
		}
	}
	return b.String()
}

// unicodeEscape decodes the \u escape whose four hex digits start at
// raw[i], with the low surrogate that follows a high one, as encoding/json
// does (a lone surrogate is U+FFFD); it returns the rune and the index
// after the escape.
func unicodeEscape(raw []byte, i int) (rune, int) {
	r := hex4strict(raw[i:])
	i += 4
	if utf16.IsSurrogate(r) {
		r2 := rune(-1)
		if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
			r2 = hex4strict(raw[i+2:])
		}
		if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
			return d, i + 6
		}
		return utf8.RuneError, i
	}
	return r, i
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

// decodedLen is the length of decodeStr(raw, st), counted without
// decoding: a string near the line cap is not decoded whole to be
// measured (FuzzJSONString holds it to encoding/json's length).
func decodedLen(raw []byte, st strStats) int {
	if !st.surrogates && utf8.Valid(raw) {
		return len(raw) - st.shrink
	}
	n := 0
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			j = len(raw) - i
		}
		n += validLen(raw[i : i+j])
		i += j
		if i >= len(raw) {
			break
		}
		e := raw[i+1]
		i += 2
		if e != 'u' {
			n++ // one byte: \n, \", …
			continue
		}
		var r rune
		r, i = unicodeEscape(raw, i)
		n += utf8.RuneLen(r)
	}
	return n
}

// validLen is the length of p once appendValid has written it.
func validLen(p []byte) int {
	if utf8.Valid(p) {
		return len(p)
	}
	n := 0
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		n += utf8.RuneLen(r)
		i += size
	}
	return n
}
