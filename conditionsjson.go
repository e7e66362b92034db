package main

// This file reads and writes stop conditions as JSON. The rules are: every
// fault in hand-written conditions — not an object, an unknown type or field
// (with a did-you-mean), a missing or mistyped field, a bad regex, a count
// below 1, an unparsable or zero duration — is refused before the first
// iteration, reported at its line and column with the JSON path of the
// fault (conditions[1].conditions[0].pattern); and what is written back
// (.metadata.json, status --json) decodes to the same conditions.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// errorf reports a fault in c, or in its field if that is not "", found
// after decoding.
func (c *condition) errorf(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	at := c.at
	if f, ok := c.fieldAt[field]; ok {
		at = f
	}
	if at == nil {
		return errors.New(msg)
	}
	e := *at
	e.Msg = msg
	return &e
}

// get returns the value of field name, for encoding.
func (c *condition) get(name string) any {
	switch name {
	case "count":
		return c.Count
	case "iterations":
		return c.Iterations
	case "duration":
		return shortDuration(c.Duration)
	case "timeout":
		if c.Timeout == 0 {
			return nil
		}
		return shortDuration(c.Timeout)
	case "usd":
		return c.USD
	case "tests":
		return c.Tests
	case "path":
		return c.Path
	case "content":
		return c.Content
	case "pattern":
		if c.Pattern == "" {
			return nil
		}
		return c.Pattern
	case "is_regex":
		if !c.IsRegex {
			return nil
		}
		return true
	case "script":
		return c.Script
	case "args":
		if len(c.Args) == 0 {
			return nil
		}
		return c.Args
	case "conditions":
		return c.Conditions
	case "condition":
		return c.Condition
	}
	panic("unknown condition field " + name)
}

// MarshalJSON writes c in the tagged form, "type" first, fields in their
// documented order, optional fields only when set.
func (c *condition) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	t, _ := json.Marshal(c.Type)
	b.Write(t)
	for _, f := range condSpecs[c.Type].fields {
		v := c.get(f.name)
		if v == nil {
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, ",%q:", f.name)
		b.Write(data)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON writes the configuration with test_timeout as a duration
// string.
func (s *stopConfig) MarshalJSON() ([]byte, error) {
	type plain stopConfig
	out := struct {
		*plain
		TestTimeout string `json:"test_timeout,omitempty"`
	}{plain: (*plain)(s)}
	if s.TestTimeout > 0 {
		out.TestTimeout = shortDuration(s.TestTimeout)
	}
	return json.Marshal(out)
}

// stopConfigKeys are the keys of a stop configuration.
var stopConfigKeys = []string{"conditions", "success", "failure", "test_cmd", "test_timeout"}

// condDecoder decodes conditions from a parsed JSON file.
type condDecoder struct {
	doc *jsonDoc
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// decodeStopConfig decodes a stop configuration found at path (the JSON
// path of n: "" for a whole file, "stop" for the config key).
func decodeStopConfig(doc *jsonDoc, n *jsonNode, path string) (*stopConfig, error) {
	d := &condDecoder{doc: doc}
	if n.Kind != jsonObject {
		return nil, doc.errorAt(n, path, `want an object {"conditions": [...], "success": [...], "failure": [...]}, got %s`, n.Kind)
	}
	s := &stopConfig{}
	for _, k := range n.Keys {
		v := n.Obj[k]
		kp := joinPath(path, k)
		switch k {
		case "conditions", "success", "failure":
			if v.Kind != jsonArray {
				return nil, doc.errorAt(v, kp, "want an array of conditions, got %s", v.Kind)
			}
			list := []*condition{}
			for i, e := range v.Arr {
				c, err := d.condition(e, fmt.Sprintf("%s[%d]", kp, i))
				if err != nil {
					return nil, err
				}
				list = append(list, c)
			}
			switch k {
			case "conditions":
				s.Conditions = list
			case "success":
				s.Success = list
			default:
				s.Failure = list
			}
		case "test_cmd":
			if v.Kind != jsonString || strings.TrimSpace(v.Str) == "" {
				return nil, doc.errorAt(v, kp, "want a non-empty command string, got %s", describeNode(v))
			}
			s.TestCmd = v.Str
		case "test_timeout":
			dur, err := d.duration(v)
			if err != nil {
				return nil, doc.errorAt(v, kp, "%v", err)
			}
			s.TestTimeout = dur
		default:
			msg := "unknown key"
			if sug := suggest(k, stopConfigKeys, map[string]string{"success_conditions": "success", "failure_conditions": "failure", "stop_conditions": "conditions"}); sug != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sug)
			}
			return nil, doc.errorAt(v, kp, "%s; want %s", msg, strings.Join(stopConfigKeys, ", "))
		}
	}
	return s, nil
}

// describeNode names a JSON value for a message: its kind, or a short
// string's value.
func describeNode(n *jsonNode) string {
	if n.Kind == jsonString {
		return strconv.Quote(clip(n.Str, 40))
	}
	if n.Kind == jsonNumber {
		return n.Num.String()
	}
	return n.Kind.String()
}

// condition decodes one condition at path.
func (d *condDecoder) condition(n *jsonNode, path string) (*condition, error) {
	if n.Kind != jsonObject {
		return nil, d.doc.errorAt(n, path, `want a condition object {"type": ...}, got %s`, describeNode(n))
	}
	tn, ok := n.Obj["type"]
	if !ok {
		return nil, d.doc.errorAt(n, path, `missing "type" (one of %s)`, strings.Join(condTypeNames(), ", "))
	}
	if tn.Kind != jsonString {
		return nil, d.doc.errorAt(tn, path+".type", "want a string, got %s", tn.Kind)
	}
	spec, ok := condSpecs[tn.Str]
	if !ok {
		msg := fmt.Sprintf("unknown condition type %q", tn.Str)
		if s := suggest(tn.Str, condTypeNames(), map[string]string{"max_time": condMaxDuration, "timeout": condMaxDuration, "max_budget": condMaxCost, "output_regex": condOutputPattern, "file_exists": condFileCreated, "script": condCustomScript, "and": condAll, "or": condAny}); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			msg += " (want one of " + strings.Join(condTypeNames(), ", ") + ")"
		}
		return nil, d.doc.errorAt(tn, path+".type", "%s", msg)
	}
	c := &condition{Type: tn.Str, at: d.doc.errorAt(n, path, "").(*fileError), fieldAt: map[string]*fileError{}}
	for _, k := range n.Keys {
		if k == "type" {
			continue
		}
		i := slices.IndexFunc(spec.fields, func(f condField) bool { return f.name == k })
		if i < 0 {
			names := fieldNames(spec)
			msg := fmt.Sprintf("unknown field for %s", c.Type)
			if len(names) == 0 {
				msg = fmt.Sprintf("%s takes no fields", c.Type)
			} else if s := suggest(k, names, nil); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (fields: " + strings.Join(names, ", ") + ")"
			}
			return nil, d.doc.errorAt(n.Obj[k], path+"."+k, "%s", msg)
		}
		if err := d.field(c, spec.fields[i], n.Obj[k], path+"."+k); err != nil {
			return nil, err
		}
		c.fieldAt[k] = d.doc.errorAt(n.Obj[k], path+"."+k, "").(*fileError)
	}
	for _, f := range spec.fields {
		if _, ok := n.Obj[f.name]; !ok && !f.optional {
			return nil, d.doc.errorAt(n, path, "%s needs %q", c.Type, f.name)
		}
	}
	if c.Type == condOutputPattern && c.IsRegex {
		re, err := regexp.Compile(c.Pattern)
		if err != nil {
			return nil, d.doc.errorAt(n.Obj["pattern"], path+".pattern", "invalid regular expression: %s", regexpErrorText(err))
		}
		c.re = re
	}
	return c, nil
}

func fieldNames(spec condSpec) []string {
	var names []string
	for _, f := range spec.fields {
		names = append(names, f.name)
	}
	return names
}

// field decodes field f of c from v.
func (d *condDecoder) field(c *condition, f condField, v *jsonNode, path string) error {
	fail := func(format string, args ...any) error {
		return d.doc.errorAt(v, path, format, args...)
	}
	switch f.kind {
	case fCount:
		n, err := v.Int()
		if err != nil {
			return fail("%v", err)
		}
		if n < 1 {
			return fail("must be at least 1, got %d", n)
		}
		if f.name == "iterations" {
			c.Iterations = n
		} else {
			c.Count = n
		}
	case fUSD:
		x, err := v.Float()
		if err != nil {
			return fail("%v", err)
		}
		if x <= 0 {
			return fail("must be above 0, got %s", v.Num)
		}
		c.USD = x
	case fDuration:
		dur, err := d.duration(v)
		if err != nil {
			return fail("%v", err)
		}
		if f.name == "timeout" {
			c.Timeout = dur
		} else {
			c.Duration = dur
		}
	case fText:
		if v.Kind != jsonString {
			return fail("want a string, got %s", v.Kind)
		}
		if v.Str == "" {
			if f.optional {
				return fail("must not be empty (leave the field out instead)")
			}
			return fail("must not be empty")
		}
		switch f.name {
		case "pattern":
			c.Pattern = v.Str
		case "path":
			c.Path = v.Str
		case "content":
			c.Content = v.Str
		case "script":
			c.Script = v.Str
		}
	case fBool:
		if v.Kind != jsonBool {
			return fail("want true or false, got %s", describeNode(v))
		}
		c.IsRegex = v.Bool
	case fTexts, fArgs:
		if v.Kind != jsonArray {
			return fail("want an array of strings, got %s", v.Kind)
		}
		list := []string{}
		for i, e := range v.Arr {
			if e.Kind != jsonString {
				return d.doc.errorAt(e, fmt.Sprintf("%s[%d]", path, i), "want a string, got %s", e.Kind)
			}
			if f.kind == fTexts && e.Str == "" {
				return d.doc.errorAt(e, fmt.Sprintf("%s[%d]", path, i), "must not be empty")
			}
			list = append(list, e.Str)
		}
		if f.kind == fTexts {
			if len(list) == 0 {
				return fail("want at least one test name")
			}
			c.Tests = list
		} else {
			c.Args = list
		}
	case fConds:
		if v.Kind != jsonArray {
			return fail("want an array of conditions, got %s", v.Kind)
		}
		if len(v.Arr) == 0 {
			return fail("want at least one condition")
		}
		for i, e := range v.Arr {
			sub, err := d.condition(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return err
			}
			c.Conditions = append(c.Conditions, sub)
		}
	case fCond:
		sub, err := d.condition(v, path)
		if err != nil {
			return err
		}
		c.Condition = sub
	}
	return nil
}

// duration decodes a duration string, above 0.
func (d *condDecoder) duration(v *jsonNode) (time.Duration, error) {
	if v.Kind != jsonString {
		return 0, fmt.Errorf(`want a duration string such as "90s" or "1h 30m", got %s`, describeNode(v))
	}
	dur, err := parseDuration(v.Str)
	if err != nil {
		return 0, fmt.Errorf("%q: %v", v.Str, err)
	}
	if dur <= 0 {
		return 0, fmt.Errorf("%q: must be above 0", v.Str)
	}
	return dur, nil
}

// regexpErrorText shortens regexp's "error parsing regexp: " prefix.
func regexpErrorText(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// suggest returns the name in names (or an alias's target) that s most
// likely meant, or "".
func suggest(s string, names []string, aliases map[string]string) string {
	if t, ok := aliases[strings.ToLower(s)]; ok {
		return t
	}
	best, bestDist := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// checkScript makes sure a custom_script can be run.
func checkScript(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("no such file")
	case err != nil:
		return unwrapPathError(err)
	case fi.IsDir():
		return errors.New("is a directory")
	case fi.Mode()&0o111 == 0:
		return fmt.Errorf("not executable (chmod +x %s)", path)
	}
	return nil
}
