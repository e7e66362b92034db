package main

// This file implements the tool's JSON files. The rules are: every file the
// tool writes is written atomically (a temporary file in the same directory,
// synced, then renamed over the target), so a crash never leaves half a file;
// and every file the tool reads is reported, when wrong, with its path, the
// line and column of the fault and the key it concerns — never silently reset.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// writeJSONAtomic writes v as indented JSON to path, atomically.
func writeJSONAtomic(path string, v any) error {
	return writeJSONAtomicSync(path, v, true)
}

// writeJSONAtomicSync is writeJSONAtomic, durable (fsynced) or not.
func writeJSONAtomicSync(path string, v any, durable bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomicSync(path, append(data, '\n'), 0o644, durable)
}

// fileError is a fault in a file the tool reads: path, position, the key it
// concerns (a JSON path such as "claude.args" or "conditions[1].pattern") and
// what is wrong.
type fileError struct {
	Path      string
	Line, Col int // 0 when unknown
	Key       string
	Msg       string
}

func (e *fileError) Error() string {
	var b strings.Builder
	switch {
	case e.Path == "" && e.Line > 0: // the caller names the file
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Col)
	case e.Path != "":
		b.WriteString(e.Path)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	// What was read is not the file the user sees at the path: say so
	// (a dotfile manager's link, an agent's).
	if target, err := os.Readlink(e.Path); e.Path != "" && err == nil {
		fmt.Fprintf(&b, " (%s is a symbolic link to %s)", filepath.Base(e.Path), target)
	}
	return b.String()
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// jsonNode is a parsed JSON value that remembers where it stood, so that a
// value of the wrong type can be reported at its line and column.
type jsonNode struct {
	Kind jsonKind
	Off  int64 // offset of the value's first byte
	Str  string
	Num  json.Number
	Bool bool
	Keys []string // object keys in file order
	Obj  map[string]*jsonNode
	Arr  []*jsonNode
}

type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

func (k jsonKind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// jsonDoc is a parsed JSON file: its tree and what is needed to report faults
// in it.
type jsonDoc struct {
	Path string
	Data []byte
	Root *jsonNode
}

// errorAt returns a fileError for node n (nil: no position) at key.
func (d *jsonDoc) errorAt(n *jsonNode, key, format string, args ...any) error {
	e := &fileError{Path: d.Path, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = position(d.Data, n.Off)
	}
	return e
}

// readJSONDoc reads and parses path. A missing file is returned as an error
// satisfying errors.Is(err, os.ErrNotExist). A file that cannot be read is
// an error without the path, which callers name.
func readJSONDoc(path string) (*jsonDoc, error) {
	data, err := readRegularFile(path, configCap)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	return parseJSONDoc(path, data)
}

// parseJSONObject parses data, read from path, as parseJSONDoc does, and
// refuses a document that is not one JSON object.
func parseJSONObject(path string, data []byte) (*jsonDoc, error) {
	doc, err := parseJSONDoc(path, data)
	if err != nil {
		return nil, err
	}
	if err := doc.wantObject(); err != nil {
		return nil, err
	}
	return doc, nil
}

// wantObject refuses a document whose value is not a JSON object.
func (d *jsonDoc) wantObject() error {
	if d.Root.Kind != jsonObject {
		return d.errorAt(d.Root, "", "want a JSON object, got %s", d.Root.Kind)
	}
	return nil
}

// parseJSONDoc parses data, read from path, into a jsonDoc.
func parseJSONDoc(path string, data []byte) (*jsonDoc, error) {
	doc := &jsonDoc{Path: path, Data: data}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	root, err := parseJSONValue(dec, 0)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			off := dec.InputOffset()
			line, col := position(data, off)
			return nil, &fileError{Path: path, Line: line, Col: col, Msg: "unexpected data after the JSON value"}
		}
	}
	if err != nil {
		off := dec.InputOffset()
		var se *json.SyntaxError
		msg := err.Error()
		var de *duplicateKeyError
		if errors.As(err, &se) {
			off = se.Offset
			msg = "invalid JSON: " + syntaxText(se)
		} else if errors.As(err, &de) {
			off = de.off
			msg = fmt.Sprintf("duplicate key %q", de.key)
		} else if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			off = int64(len(data))
			msg = "invalid JSON: unexpected end of file"
			if len(bytes.TrimSpace(data)) == 0 {
				msg = "empty file (want a JSON object)"
			}
		}
		line, col := position(data, off)
		return nil, &fileError{Path: path, Line: line, Col: col, Msg: msg}
	}
	fixOffsets(data, root)
	doc.Root = root
	return doc, nil
}

// duplicateKeyError is an object with the same key twice: encoding/json keeps
// the last silently, which hides mistakes in hand-written config.
type duplicateKeyError struct {
	key string
	off int64
}

func (e *duplicateKeyError) Error() string { return fmt.Sprintf("duplicate key %q", e.key) }

const maxJSONDepth = 200

func parseJSONValue(dec *json.Decoder, depth int) (*jsonNode, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("nested too deeply")
	}
	// InputOffset is the end of the previous token; skip the white space and
	// separators so that the node points at its own first byte.
	off := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	n := &jsonNode{Off: off}
	switch t := tok.(type) {
	case nil:
		n.Kind = jsonNull
	case bool:
		n.Kind, n.Bool = jsonBool, t
	case json.Number:
		n.Kind, n.Num = jsonNumber, t
	case string:
		n.Kind, n.Str = jsonString, t
	case json.Delim:
		switch t {
		case '[':
			n.Kind = jsonArray
			for dec.More() {
				v, err := parseJSONValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.Arr = append(n.Arr, v)
			}
		case '{':
			n.Kind = jsonObject
			n.Obj = map[string]*jsonNode{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := parseJSONValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if _, dup := n.Obj[k]; dup {
					return nil, &duplicateKeyError{key: k, off: v.Off}
				}
				n.Keys = append(n.Keys, k)
				n.Obj[k] = v
			}
		}
		if _, err := dec.Token(); err != nil { // closing delimiter
			return nil, err
		}
	}
	return n, nil
}

// fixOffsets moves each node's offset past white space, commas and colons to
// the first byte of its value; json.Decoder reports offsets at the end of the
// previous token.
func fixOffsets(data []byte, n *jsonNode) {
	for n.Off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[n.Off]) >= 0 {
		n.Off++
	}
	for _, c := range n.Arr {
		fixOffsets(data, c)
	}
	for _, c := range n.Obj {
		fixOffsets(data, c)
	}
}

// Int returns the node as a non-negative int, or an error describing why it
// is not one.
func (n *jsonNode) Int() (int, error) {
	if n.Kind != jsonNumber {
		return 0, fmt.Errorf("want a whole number, got %s", n.Kind)
	}
	i, err := strconv.Atoi(n.Num.String())
	if err != nil {
		return 0, fmt.Errorf("want a whole number, got %s", n.Num)
	}
	if i < 0 {
		return 0, fmt.Errorf("must not be negative, got %d", i)
	}
	return i, nil
}

// Float returns the node as a non-negative number.
func (n *jsonNode) Float() (float64, error) {
	if n.Kind != jsonNumber {
		return 0, fmt.Errorf("want a number, got %s", n.Kind)
	}
	f, err := n.Num.Float64()
	if err != nil {
		return 0, fmt.Errorf("want a number, got %s", n.Num)
	}
	if f < 0 {
		return 0, fmt.Errorf("must not be negative, got %s", n.Num)
	}
	return f, nil
}

// decodeJSONFile decodes data (read from path) into v and reports faults with position and field.
func decodeJSONFile(path string, data []byte, v any) error {
	// First as a document: a syntax fault, a key given twice (encoding/json
	// would keep the last one silently), data after the value or a value
	// that is no object is said with its position.
	if _, err := parseJSONObject(path, data); err != nil {
		return err
	}
	// Then into v: what is left is a value of the wrong type (or a
	// decoder of v's own refusing its value).
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			line, col := position(data, te.Offset)
			return &fileError{Path: path, Line: line, Col: col, Key: jsonKeyPath(te.Field), Msg: typeText(te)}
		}
		return &fileError{Path: path, Msg: err.Error()}
	}
	return nil
}

// syntaxText is a syntax error's message, a byte that is not ASCII named by
// its value: encoding/json, which scans bytes, quotes one as the Latin-1
// character it is not ('ÿ' for 0xff).
func syntaxText(se *json.SyntaxError) string {
	msg := se.Error()
	const lead = "character '"
	i := strings.Index(msg, lead)
	if i < 0 {
		return msg
	}
	r, n := utf8.DecodeRuneInString(msg[i+len(lead):])
	if r < utf8.RuneSelf || r > 0xff || !strings.HasPrefix(msg[i+len(lead)+n:], "'") {
		return msg
	}
	return msg[:i] + fmt.Sprintf("byte 0x%02x (not UTF-8 text)", r) + msg[i+len(lead)+n+1:]
}

// typeText says what a value of the wrong type should have been, in JSON's
// words: "want an object, got array", never a Go type's name.
func typeText(te *json.UnmarshalTypeError) string {
	return fmt.Sprintf("want %s, got %s", jsonWants(te.Type), te.Value)
}

// jsonWants names the JSON values that decode into t.
func jsonWants(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return jsonWants(t.Elem())
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a value of another type"
}

// jsonKeyPath is the key path of a decoding error's field, without the
// names of embedded structs (workTotals in .metadata.json), which are not
// keys of the file.
func jsonKeyPath(field string) string {
	return strings.TrimPrefix(field, "workTotals.")
}
