package main

// This file is a small validating JSON scanner for the stream-json fast path
// (streamfast.go). The rules are: it accepts exactly the texts encoding/json
// accepts, or gives up; a string it decodes is what encoding/json would
// decode (invalid UTF-8 and lone surrogates become U+FFFD); a string it only
// measures is walked once, eight bytes at a time, and never copied; it never
// panics and always ends, whatever the input. Giving up is always safe: the
// caller then decodes the line with encoding/json.

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxScanDepth bounds nesting; deeper texts are left to encoding/json.
const maxScanDepth = 200

// jsonScanner walks one JSON text. After a failure (bad is set) every
// method returns at once, so that loops over members end.
type jsonScanner struct {
	data  []byte
	i     int
	depth int
	bad   bool
}

// fail records that the scanner gives up.
func (s *jsonScanner) fail() {
	s.bad = true
	s.i = len(s.data)
}

// ws skips whitespace.
func (s *jsonScanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.ws()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// end reports whether only whitespace is left.
func (s *jsonScanner) end() bool {
	s.ws()
	return !s.bad && s.i == len(s.data)
}

// enter consumes open ('{' or '['), or fails.
func (s *jsonScanner) enter(open byte) bool {
	if s.peek() != open || s.depth >= maxScanDepth {
		s.fail()
		return false
	}
	s.i++
	s.depth++
	return true
}

// more reports whether the object or array being read has another member,
// consuming the comma before it or, at the end, the closing bracket. n
// counts the members seen.
func (s *jsonScanner) more(close byte, n *int) bool {
	if s.bad {
		return false
	}
	c := s.peek()
	if *n > 0 && c == ',' {
		s.i++
		*n++
		return true
	}
	if c == close {
		s.i++
		s.depth--
		return false
	}
	if *n > 0 {
		s.fail()
		return false
	}
	*n++
	return true
}

// rawKey reads an object key and its colon.
func (s *jsonScanner) rawKey() ([]byte, strStats) {
	if s.peek() != '"' {
		s.fail()
		return nil, strStats{}
	}
	raw, st := s.str()
	if s.peek() != ':' {
		s.fail()
		return nil, st
	}
	s.i++
	return raw, st
}

// key reads an object key to match with a field. A key with escapes is
// left to encoding/json (fail): none of the fields the tool reads needs one.
func (s *jsonScanner) key() []byte {
	raw, st := s.rawKey()
	if st.escapes {
		s.fail()
	}
	return raw
}

// skip reads and validates any value.
func (s *jsonScanner) skip() {
	switch c := s.peek(); c {
	case '{':
		s.enter('{')
		for n := 0; s.more('}', &n); {
			s.rawKey()
			s.skip()
		}
	case '[':
		s.enter('[')
		for n := 0; s.more(']', &n); {
			s.skip()
		}
	case '"':
		s.str()
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			s.number()
			return
		}
		s.fail()
	}
}

// raw reads any value and returns its text.
func (s *jsonScanner) raw() []byte {
	s.ws()
	start := s.i
	s.skip()
	if s.bad {
		return nil
	}
	return s.data[start:s.i]
}

// literal reads true, false or null.
func (s *jsonScanner) literal(word string) {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		s.fail()
		return
	}
	s.i += len(word)
}

// number reads a number and returns its text.
func (s *jsonScanner) number() []byte {
	d, i := s.data, s.i
	digits := func() bool {
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		s.fail()
		return nil
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			s.fail()
			return nil
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			s.fail()
			return nil
		}
	}
	start := s.i
	s.i = i
	return d[start:i]
}

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

// strValue reads a string into dst; null leaves dst as it is. It reports
// whether the value had the right type (a value of another type is read
// and skipped).
func (s *jsonScanner) strValue(dst *string) bool {
	switch s.peek() {
	case '"':
		raw, st := s.str()
		if !s.bad {
			*dst = decodeClipped(raw, st)
		}
		return true
	case 'n':
		s.literal("null")
		return true
	}
	s.skip()
	return false
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

// strPtr reads a string into a new *dst; null sets dst to nil.
func (s *jsonScanner) strPtr(dst **string) bool { return scanPtr(s, dst, s.strValue) }

// boolValue reads true or false into dst; null leaves dst as it is.
func (s *jsonScanner) boolValue(dst *bool) bool {
	switch s.peek() {
	case 't':
		s.literal("true")
		*dst = true
		return true
	case 'f':
		s.literal("false")
		*dst = false
		return true
	case 'n':
		s.literal("null")
		return true
	}
	s.skip()
	return false
}

// numText reads a number's text; null returns nil with ok set; ok is false
// for a value of another type.
func (s *jsonScanner) numText() (num []byte, ok bool) {
	switch c := s.peek(); {
	case c == 'n':
		s.literal("null")
		return nil, true
	case c == '-' || c >= '0' && c <= '9':
		return s.number(), true
	}
	s.skip()
	return nil, false
}

// intValue reads an integer of bits bits into dst; null leaves dst as it
// is. A fraction, an exponent or an overflow is the wrong type, as for
// encoding/json.
func (s *jsonScanner) intValue(dst *int64, bits int) bool {
	num, ok := s.numText()
	if !ok || num == nil || s.bad {
		return ok
	}
	n, err := strconv.ParseInt(string(num), 10, bits)
	if err != nil {
		return false
	}
	*dst = n
	return true
}

// intField reads an int into dst.
func (s *jsonScanner) intField(dst *int) bool {
	n := int64(*dst)
	ok := s.intValue(&n, strconv.IntSize)
	*dst = int(n)
	return ok
}

// intPtr reads an int into a new *dst; null sets dst to nil.
func (s *jsonScanner) intPtr(dst **int) bool { return scanPtr(s, dst, s.intField) }

// floatValue reads a float64 into dst; null leaves dst as it is.
func (s *jsonScanner) floatValue(dst *float64) bool {
	num, ok := s.numText()
	if !ok || num == nil || s.bad {
		return ok
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return false
	}
	*dst = f
	return true
}

// floatPtr reads a float64 into a new *dst; null sets dst to nil.
func (s *jsonScanner) floatPtr(dst **float64) bool { return scanPtr(s, dst, s.floatValue) }

// scanPtr reads a value with read into a new *dst; null sets dst to nil.
func scanPtr[T any](s *jsonScanner, dst **T, read func(*T) bool) bool {
	if s.peek() == 'n' {
		s.literal("null")
		*dst = nil
		return true
	}
	v := new(T)
	if !read(v) {
		return false
	}
	*dst = v
	return true
}
