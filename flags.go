package main

// This file implements command-line parsing shared by every command. The
// rules are: flags and positional arguments may be interleaved ("init demo
// -m 5"), "--" ends the flags, both -flag and --flag are accepted, -h and
// --help print the command's manual to stdout and exit 0, and every other
// problem is a usage error naming the flag and the value.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// errHelp asks for the command's manual on stdout.
var errHelp = errors.New("help requested")

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args into fs, allowing positional arguments between flags,
// and returns the positional arguments. More than maxPositional of them is a
// usage error.
func parseFlags(fs *flag.FlagSet, args []string, maxPositional int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			msg := bothSpellings(fs, flagErrorText(err, args))
			if name, ok := strings.CutPrefix(msg, "unknown flag "); ok {
				if s := suggestFlag(fs, name); s != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", s)
				}
			}
			return nil, usagef("%s", msg)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// Parse stops at the first non-flag argument, or after "--", which
		// ends the flags for good.
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) > maxPositional {
		if maxPositional == 0 {
			return nil, usagef("unexpected argument %q", pos[0])
		}
		return nil, usagef("too many arguments: %q", pos[maxPositional])
	}
	return pos, nil
}

// bothSpellings names, in flag's message msg about a bad value, a flag
// that has two spellings by both ("-m/--max-iterations"), whichever was
// typed: as the checks made after parsing name it.
func bothSpellings(fs *flag.FlagSet, msg string) string {
	i := strings.Index(msg, " for flag -")
	if i < 0 || !strings.HasPrefix(msg, "invalid value ") {
		return msg
	}
	name, tail, ok := strings.Cut(msg[i+len(" for flag "):], ":")
	f := fs.Lookup(strings.TrimLeft(name, "-"))
	if !ok || f == nil {
		return msg
	}
	ptr := func(v flag.Value) uintptr {
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
			return rv.Pointer()
		}
		return 0
	}
	var short, long string
	fs.VisitAll(func(g *flag.Flag) {
		if p := ptr(g.Value); p == 0 || p != ptr(f.Value) {
			return
		}
		if len(g.Name) == 1 {
			short = "-" + g.Name
		} else {
			long = "--" + g.Name
		}
	})
	if short == "" || long == "" {
		return msg
	}
	return msg[:i] + " for flag " + short + "/" + long + ":" + tail
}

// flagErrorText rewords flag's errors: it says "-name" even when the user
// typed --name, and "provided but not defined" is obscure.
func flagErrorText(err error, args []string) string {
	s := err.Error()
	if name, ok := strings.CutPrefix(s, "flag provided but not defined: "); ok {
		return "unknown flag " + asTyped(name, args)
	}
	if name, ok := strings.CutPrefix(s, "flag needs an argument: "); ok {
		return "flag " + asTyped(name, args) + " needs a value"
	}
	if rest, ok := strings.CutPrefix(s, "invalid boolean value "); ok {
		// flag's own wording for bool flags: "invalid boolean value "x"
		// for -name: parse error".
		if val, name, ok := strings.Cut(rest, " for -"); ok {
			name, _, _ = strings.Cut(name, ":")
			return fmt.Sprintf("invalid value %s for flag %s: want true or false", val, asTyped("-"+name, args))
		}
	}
	if i := strings.Index(s, " for flag -"); i >= 0 {
		rest := s[i+len(" for flag "):]
		name, tail, _ := strings.Cut(rest, ":")
		return s[:i] + " for flag " + asTyped(name, args) + ":" + tail
	}
	return s
}

// asTyped returns flag name ("-x") as the user spelled it in args.
func asTyped(name string, args []string) string {
	for _, a := range args {
		a, _, _ = strings.Cut(a, "=")
		if a == "-"+name {
			return a
		}
	}
	return name
}

// durationFlag is a flag.Value holding a non-negative Go duration.
type durationFlag struct {
	d   time.Duration
	set bool
}

func (f *durationFlag) String() string { return f.d.String() }
func (f *durationFlag) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	f.d, f.set = d, true
	return nil
}

// parseDuration accepts Go durations ("2h30m") and the spaced form "1h 30m",
// and rejects negative ones.
func parseDuration(s string) (time.Duration, error) {
	t := strings.Join(strings.Fields(s), "")
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("not a duration (want e.g. 90s, 2h30m)")
	}
	if d < 0 {
		return 0, fmt.Errorf("must not be negative")
	}
	return d, nil
}

// countFlag is a flag.Value holding a non-negative int.
type countFlag struct {
	n   int
	set bool
}

func (f *countFlag) String() string { return fmt.Sprint(f.n) }
func (f *countFlag) Set(s string) error {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != strings.TrimPrefix(s, "+") {
		return fmt.Errorf("not a whole number")
	}
	if n < 0 {
		return fmt.Errorf("must not be negative")
	}
	f.n, f.set = n, true
	return nil
}

// notZero refuses f given as 0 where a count must be at least 1, with a
// usage error naming the flag as name ("--max-failures").
func (f *countFlag) notZero(name string) error {
	if f.set && f.n == 0 {
		return usagef("invalid value \"0\" for flag %s: must be at least 1", name)
	}
	return nil
}

// secondsFlag is a flag.Value holding a non-negative number of seconds.
type secondsFlag struct {
	d   time.Duration
	set bool
}

func (f *secondsFlag) String() string { return fmt.Sprint(f.d.Seconds()) }
func (f *secondsFlag) Set(s string) error {
	// A whole token, never its numeric prefix: "1h" is refused, not 1 s.
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		if d, derr := time.ParseDuration(s); derr == nil && d > 0 {
			return fmt.Errorf("not a number of seconds (for %s, give %s)", s, strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
		}
		return fmt.Errorf("not a number of seconds")
	}
	if x < 0 {
		return fmt.Errorf("must not be negative")
	}
	if x > 1e9 {
		return fmt.Errorf("too large")
	}
	f.d, f.set = time.Duration(x*float64(time.Second)), true
	return nil
}

// stringFlag is a flag.Value holding a string, remembering whether it was set.
type stringFlag struct {
	s   string
	set bool
}

func (f *stringFlag) String() string     { return f.s }
func (f *stringFlag) Set(s string) error { f.s, f.set = s, true; return nil }

// notBlank refuses f given as nothing or white space, with a usage error
// naming the flag as name ("--test-cmd").
func (f *stringFlag) notBlank(name string) error {
	if f.set && strings.TrimSpace(f.s) == "" {
		return usagef("invalid value %q for flag %s: empty", f.s, name)
	}
	return nil
}

// firstError returns the first of errs that is not nil: of checks made in
// order, the one to report.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// usdFlag is a flag.Value holding an amount of US dollars above 0.
type usdFlag struct {
	usd float64
	set bool
}

func (f *usdFlag) String() string { return fmt.Sprint(f.usd) }
func (f *usdFlag) Set(s string) error {
	x, err := strconv.ParseFloat(strings.TrimPrefix(s, "$"), 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return fmt.Errorf("not an amount of US dollars (want e.g. 5 or 2.50)")
	}
	if x <= 0 {
		return fmt.Errorf("must be above 0")
	}
	f.usd, f.set = x, true
	return nil
}

// listFlag is a flag.Value that may be given many times; each value must be
// non-empty and pass check, if set.
type listFlag struct {
	vals  []string
	check func(string) error
}

func (f *listFlag) String() string { return strings.Join(f.vals, ", ") }
func (f *listFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty")
	}
	if f.check != nil {
		if err := f.check(s); err != nil {
			return err
		}
	}
	f.vals = append(f.vals, s)
	return nil
}

// flagSynonyms are, by command, flags users bring from other commands or
// tools (history's --last, tail's -n), and what says the same here.
var flagSynonyms = map[string]map[string]string{
	"logs": {"last": "--run -1", "n": "--run N", "tail": "-f", "lines": "--run N"},
}

// suggestFlag returns the flag of fs that typed (as the user typed it,
// "--max-iteration") most likely meant, spelt the same way ("-" or "--"),
// or "".
func suggestFlag(fs *flag.FlagSet, typed string) string {
	dashes := "-"
	if strings.HasPrefix(typed, "--") {
		dashes = "--"
	}
	name, _, _ := strings.Cut(strings.TrimLeft(typed, "-"), "=")
	if s := flagSynonyms[fs.Name()][name]; s != "" {
		return s
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if best := closestName(name, names); best != "" {
		return dashes + best
	}
	return ""
}

// closestName returns the name among names within a few edits of typed
// (fewer for a short word), or one typed is a prefix of when that is the
// only such name; "" when none is close.
func closestName(typed string, names []string) string {
	if typed == "" {
		return ""
	}
	limit := min(2, max(1, len(typed)/3))
	if len(typed) == 1 {
		limit = 0 // every other letter is one edit away: only -F for -f
	}
	best, bestDist := "", limit+1
	var prefixed []string
	for _, n := range names {
		if d := editDistance(strings.ToLower(typed), strings.ToLower(n)); d < bestDist {
			best, bestDist = n, d
		}
		if len(typed) >= 2 && strings.HasPrefix(n, typed) {
			prefixed = append(prefixed, n)
		}
	}
	if best == "" && len(prefixed) == 1 {
		best = prefixed[0]
	}
	return best
}
