package main

// This file reads and checks configuration values, for every layer alike
// (config.go): a config file's object, nested or dotted, into keys; each
// value by its key's kind; the closed sets (output levels, notification
// events) and notification URLs checked. The rules are: an unknown key is
// an error with the closest known one; a value of the wrong type or out of
// its set is an error naming the key and the value; nothing is ignored.

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// parseConfigObject checks every key of obj (found under prefix) and stores
// the values in out.
func parseConfigObject(doc *jsonDoc, obj *jsonNode, prefix string, out map[string]any) error {
	for _, k := range obj.Keys {
		name := prefix + k
		v := obj.Obj[k]
		key := lookupConfigKey(name)
		if key == nil {
			if v.Kind == jsonObject && isConfigPrefix(name+".") {
				if err := parseConfigObject(doc, v, name+".", out); err != nil {
					return err
				}
				continue
			}
			msg := "unknown key"
			if s := suggestKey(name); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return doc.errorAt(v, name, "%s", msg)
		}
		val, err := parseConfigValue(doc, key, v)
		if err != nil {
			var fe *fileError
			if errors.As(err, &fe) {
				return err
			}
			return doc.errorAt(v, name, "%v", err)
		}
		out[name] = val
	}
	return nil
}

func isConfigPrefix(p string) bool {
	for _, k := range configKeys {
		if strings.HasPrefix(k.name, p) {
			return true
		}
	}
	return false
}

// suggestKey returns the configuration key that name most likely meant: one
// within two edits of it, or whose last part it is.
func suggestKey(name string) string {
	lower := strings.ToLower(name)
	best, bestDist := "", 3
	for _, k := range configKeys {
		kl := strings.ToLower(k.name)
		if strings.HasSuffix(kl, "."+lower) || (len(lower) >= 5 && strings.HasSuffix(kl, lower)) {
			return k.name // "args", "maxIterations" (defaultMaxIterations)
		}
		if d := editDistance(kl, lower); d < bestDist {
			best, bestDist = k.name, d
		}
	}
	return best
}

// editDistance is the number of edits that turn a into b: a letter
// inserted, deleted, replaced, or two next to each other swapped (the
// optimal string alignment distance), so that "dmeo" is one typo from
// "demo" as "dmo" is. Every did-you-mean counts with it: commands, flags,
// workspace names, config keys, condition types and fields.
func editDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j]; three rows kept.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// parseConfigValue checks one value against its key's kind and its key's
// own rules (checkKeyValue): every reader, config set and run take a value
// or refuse it alike.
func parseConfigValue(doc *jsonDoc, key *configKey, v *jsonNode) (any, error) {
	val, err := parseKindValue(doc, key, v)
	if err != nil {
		return nil, err
	}
	if err := checkKeyValue(key, val); err != nil {
		return nil, err
	}
	return val, nil
}

// checkKeyValue checks what a key's kind leaves open: the same rules as
// the command-line flags that set the key, or that the run would apply.
func checkKeyValue(key *configKey, v any) error {
	switch key.name {
	case "verification.maxAttempts":
		if v.(int) < 1 {
			return errors.New("must be at least 1")
		}
	case "verification.depth":
		return checkDepth(v.(string))
	case "agent":
		return checkAgentName(v.(string))
	case "verification.agent":
		if s := v.(string); s != "" {
			return checkAgentName(s)
		}
	case "fallbackAgents":
		for _, n := range v.([]string) {
			if err := checkAgentName(n); err != nil {
				return err
			}
		}
	case "agents.codex.command":
		if v.(string) == "" {
			return errors.New("must not be empty")
		}
	case "claude.permissionMode":
		if s := v.(string); s != "" {
			return checkPermissionMode(s)
		}
	}
	return nil
}

// parseKindValue checks one value against its key's kind.
func parseKindValue(doc *jsonDoc, key *configKey, v *jsonNode) (any, error) {
	switch key.kind {
	case kindString, kindPath:
		if v.Kind != jsonString {
			return nil, fmt.Errorf("want a string, got %s", v.Kind)
		}
		if v.Str == "" && key.kind == kindPath {
			return nil, fmt.Errorf("must not be empty")
		}
		return v.Str, nil
	case kindCount:
		return v.Int()
	case kindSeconds:
		return v.Float()
	case kindNumber:
		return v.Float()
	case kindDuration:
		if f, err := v.Float(); err == nil && f == 0 {
			return "0", nil // 0, as the help says and config shows it: never
		}
		if v.Kind != jsonString {
			return nil, fmt.Errorf("want a duration as a string (e.g. \"10m\"), or 0 for never; got %s", v.Kind)
		}
		if _, err := parseDuration(v.Str); err != nil {
			return nil, err
		}
		return v.Str, nil
	case kindBool:
		if v.Kind != jsonBool {
			return nil, fmt.Errorf("want true or false, got %s", v.Kind)
		}
		return v.Bool, nil
	case kindOutputLevel, kindOnQuestion:
		if v.Kind != jsonString {
			return nil, fmt.Errorf("want a string, got %s", v.Kind)
		}
		check := checkOutputLevel
		if key.kind == kindOnQuestion {
			check = checkOnQuestion
		}
		if err := check(v.Str); err != nil {
			return nil, err
		}
		return v.Str, nil
	case kindURL:
		if v.Kind != jsonString {
			return nil, fmt.Errorf("want a string, got %s", v.Kind)
		}
		if err := checkNotifyURL(v.Str); err != nil {
			return nil, err
		}
		return v.Str, nil
	case kindStringList, kindEventList:
		if v.Kind != jsonArray {
			return nil, fmt.Errorf("want an array of strings, got %s", v.Kind)
		}
		list := []string{}
		for i, e := range v.Arr {
			if e.Kind != jsonString {
				return nil, doc.errorAt(e, fmt.Sprintf("%s[%d]", key.name, i), "want a string, got %s", e.Kind)
			}
			if key.kind == kindEventList {
				if err := checkNotifyEvent(e.Str); err != nil {
					return nil, doc.errorAt(e, fmt.Sprintf("%s[%d]", key.name, i), "%v", err)
				}
			}
			list = append(list, e.Str)
		}
		return list, nil
	case kindConditions:
		cfg, err := decodeStopConfig(doc, v, key.name)
		if err != nil {
			return nil, err // a config file's fault: exit 1, as every other
		}
		return cfg, nil
	}
	panic("unreachable")
}

func checkOutputLevel(s string) error {
	switch s {
	case outputQuiet, outputProgress, outputVerbose:
		return nil
	}
	return fmt.Errorf("unknown output level %q (want quiet, progress or verbose)", s)
}

func checkNotifyURL(s string) error {
	if s == "" {
		return nil
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		// url.Parse takes "http://h/a b"; no server would.
		return fmt.Errorf("not an http(s) URL: %q contains a space or control character (encode a space as %%20)", redactURL(s))
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("not an http(s) URL: %q", redactURL(s))
	}
	return nil
}

func checkNotifyEvent(s string) error {
	if s == "all" {
		return nil
	}
	for _, e := range notifyEventNames {
		if s == e {
			return nil
		}
	}
	return fmt.Errorf("unknown event %q (want all, or one of %s)", s, strings.Join(notifyEventNames, ", "))
}
