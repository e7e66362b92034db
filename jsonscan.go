package main

// This file is a small validating JSON scanner for the stream-json fast path
// (streamfast.go). The rules are: it accepts exactly the texts encoding/json
// accepts, or gives up; a string it decodes is what encoding/json would
// decode (invalid UTF-8 and lone surrogates become U+FFFD); a string it only
// measures is walked once, eight bytes at a time, and never copied; it never
// panics and always ends, whatever the input. Giving up is always safe: the
// caller then decodes the line with encoding/json.

import (
	"strconv"
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

// strValue reads a string into dst; null leaves dst as it is. It reports
// whether the value had the right type (a value of another type is read
// and skipped).
func (s *jsonScanner) strValue(dst *string) bool {
	if s.peek() == '"' {
		raw, st := s.str()
		if !s.bad {
			*dst = decodeClipped(raw, st)
		}
		return true
	}
	return s.nullOrOther()
}

// nullOrOther reads a value that is not of the type a typed read wants:
// null counts as of that type (it leaves the destination as it is); any
// other value is skipped, and reported as of the wrong type.
func (s *jsonScanner) nullOrOther() bool {
	if s.peek() == 'n' {
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
	}
	return s.nullOrOther()
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
