package main

// This file implements stop conditions and their evaluation. A
// condition is a tagged union written as {"type":"<snake_case>", ...fields};
// a stop configuration holds three groups of them: "failure" (the run ends
// with exit 1), "success" (exit 0, status completed) and "conditions"
// (exit 0, status stopped). The rules are:
//
//   - Every fault in hand-written conditions (not an object, unknown type or
//     field, missing or mistyped field, bad regex, a count below 1, an
//     unparsable duration) is refused before the first iteration with the
//     JSON path of the fault (conditionsjson.go); a condition that cannot
//     be read is an error, never "silently false".
//   - After every iteration every condition is evaluated, so that each has a
//     progress (0..1) and a reason to show. The first met one ends the run:
//     groups in the order failure, success, conditions, and within a group
//     by priority (on_error 100 … never 0), ties in file order. The groups
//     are not sorted together: a task finished on the last allowed
//     iteration must end as completed, not as "max iterations reached".
//   - A condition that reads what the agent writes is judged on what the
//     iteration judged did, as .status.json's claims are (evidence.go):
//     task_complete (and a question) only when the iteration wrote the
//     file; file_created and file_contains when the file was created,
//     replaced or changed since the run started, and, once a completion
//     was refused, since that refusal (condfile.go: a DONE made in
//     iteration 1 and refused does not end iteration 3; a file under a
//     not counts as a state, so a BLOCKED.md made earlier keeps
//     not{file_created} unmet); output_pattern reads the iteration's own
//     final result. No
//     success condition is met after a failed iteration. Three read the
//     project as the iteration left it rather than a claim:
//     all_tests_pass and specific_tests_pass (the test command runs after
//     every iteration, on its tree) and custom_script (the user's own
//     judgement, run after every iteration). So a rejected completion (by
//     the verifier, --min-iterations, a failure) is judged again only
//     when the agent claims it again, or the tests or the script pass
//     again on the tree the next iteration left.
//   - The loop's own stops are conditions of the same mechanism:
//     max_iterations (-m), task_complete (.status.json), no_progress
//     (stagnation), failure_streak (--max-failures) and user_signal (the s
//     key, the .stop file).

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Condition types.
const (
	condMaxIterations     = "max_iterations"
	condMaxDuration       = "max_duration"
	condMaxCost           = "max_cost"
	condTestFailureStreak = "test_failure_streak"
	condAllTestsPass      = "all_tests_pass"
	condSpecificTestsPass = "specific_tests_pass"
	condNoProgress        = "no_progress"
	condFileCreated       = "file_created"
	condFileContains      = "file_contains"
	condOutputPattern     = "output_pattern"
	condOnError           = "on_error"
	condFailureStreak     = "failure_streak"
	condCustomScript      = "custom_script"
	condUserSignal        = "user_signal"
	condTaskComplete      = "task_complete"
	condAll               = "all"
	condAny               = "any"
	condNot               = "not"
	condNever             = "never"
)

// Condition groups, in the order they are checked.
const (
	groupFailure    = "failure"
	groupSuccess    = "success"
	groupConditions = "conditions"
)

var groupOrder = []string{groupFailure, groupSuccess, groupConditions}

// groupVerb says what a group's met condition does, for messages.
var groupVerb = map[string]string{groupFailure: "fail", groupSuccess: "complete", groupConditions: "stop"}

// defaultScriptTimeout bounds a custom_script without a "timeout".
const defaultScriptTimeout = time.Minute

// fieldKind is what a condition field holds.
type fieldKind int

const (
	fCount    fieldKind = iota // a whole number, at least 1
	fUSD                       // a number above 0
	fDuration                  // a duration string above 0
	fText                      // a non-empty string
	fBool                      // true or false
	fTexts                     // a non-empty array of non-empty strings
	fArgs                      // an array of strings
	fConds                     // a non-empty array of conditions
	fCond                      // one condition
)

type condField struct {
	name     string
	kind     fieldKind
	optional bool
}

// condSpec is one condition type: its priority (higher is checked first)
// and its fields, in the order they are written.
type condSpec struct {
	priority int
	fields   []condField
}

var condSpecs = map[string]condSpec{
	condOnError:           {100, []condField{{"pattern", fText, true}}},
	condUserSignal:        {90, nil},
	condMaxIterations:     {80, []condField{{"count", fCount, false}}},
	condMaxDuration:       {80, []condField{{"duration", fDuration, false}}},
	condMaxCost:           {80, []condField{{"usd", fUSD, false}}},
	condFailureStreak:     {70, []condField{{"count", fCount, false}}},
	condTestFailureStreak: {70, []condField{{"count", fCount, false}}},
	condNoProgress:        {70, []condField{{"iterations", fCount, false}}},
	condTaskComplete:      {60, nil},
	condAllTestsPass:      {60, nil},
	condSpecificTestsPass: {60, []condField{{"tests", fTexts, false}}},
	condOutputPattern:     {50, []condField{{"pattern", fText, false}, {"is_regex", fBool, true}}},
	condFileCreated:       {40, []condField{{"path", fText, false}}},
	condFileContains:      {40, []condField{{"path", fText, false}, {"content", fText, false}}},
	condCustomScript:      {30, []condField{{"script", fText, false}, {"args", fArgs, true}, {"timeout", fDuration, true}}},
	condAll:               {20, []condField{{"conditions", fConds, false}}},
	condAny:               {20, []condField{{"conditions", fConds, false}}},
	condNot:               {10, []condField{{"condition", fCond, false}}},
	condNever:             {0, nil},
}

// condTypeNames lists the types by priority, for messages.
func condTypeNames() []string {
	names := make([]string, 0, len(condSpecs))
	for n := range condSpecs {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := condSpecs[b].priority - condSpecs[a].priority; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return names
}

// condition is one stop condition. Type says which fields it uses.
type condition struct {
	Type       string
	Count      int           // max_iterations, failure_streak, test_failure_streak
	Iterations int           // no_progress
	Duration   time.Duration // max_duration
	USD        float64       // max_cost
	Tests      []string      // specific_tests_pass
	Path       string        // file_created, file_contains
	Content    string        // file_contains
	Pattern    string        // output_pattern; on_error ("" matches any error)
	IsRegex    bool          // output_pattern
	Script     string        // custom_script
	Args       []string      // custom_script
	Timeout    time.Duration // custom_script (0: defaultScriptTimeout)
	Conditions []*condition  // all, any
	Condition  *condition    // not

	re      *regexp.Regexp // output_pattern with is_regex
	builtin bool           // one of the loop's own stops
	start   *fileStart     // file_created, file_contains: the file as last judged (condfile.go)
	// at is where the condition was written, and fieldAt where each of its
	// fields was (nil for conditions built from flags), for faults found
	// after decoding.
	at      *fileError
	fieldAt map[string]*fileError
}

func (c *condition) priority() int { return condSpecs[c.Type].priority }

// stopConfig is a full stop configuration: the value of --conditions FILE
// or of the "stop" config key.
type stopConfig struct {
	Conditions  []*condition  `json:"conditions,omitempty"`
	Success     []*condition  `json:"success,omitempty"`
	Failure     []*condition  `json:"failure,omitempty"`
	TestCmd     string        `json:"test_cmd,omitempty"`
	TestTimeout time.Duration `json:"-"`
}

// group returns the conditions of group name.
func (s *stopConfig) group(name string) []*condition {
	switch name {
	case groupFailure:
		return s.Failure
	case groupSuccess:
		return s.Success
	}
	return s.Conditions
}

// describe says in words when c is met.
func (c *condition) describe() string {
	switch c.Type {
	case condMaxIterations:
		return "after " + plural(c.Count, "iteration")
	case condMaxDuration:
		return "after " + shortDuration(c.Duration)
	case condMaxCost:
		return "once " + formatUSD(c.USD) + " is spent"
	case condFailureStreak:
		return fmt.Sprintf("after %s in a row", plural(c.Count, "failed iteration"))
	case condTestFailureStreak:
		return fmt.Sprintf("after %s in a row", plural(c.Count, "failing test run"))
	case condAllTestsPass:
		return "when all tests pass"
	case condSpecificTestsPass:
		return "when these tests pass: " + strings.Join(c.Tests, ", ")
	case condNoProgress:
		return fmt.Sprintf("after %s without progress", plural(c.Iterations, "iteration"))
	case condTaskComplete:
		return "when " + statusFile + " says complete"
	case condOutputPattern:
		if c.IsRegex {
			return fmt.Sprintf("when the result matches /%s/", c.Pattern)
		}
		return fmt.Sprintf("when the result contains %q", c.Pattern)
	case condFileCreated:
		return "when " + c.Path + " exists"
	case condFileContains:
		return fmt.Sprintf("when %s contains %q", c.Path, c.Content)
	case condOnError:
		if c.Pattern != "" {
			return fmt.Sprintf("on a failed iteration whose error contains %q", c.Pattern)
		}
		return "on any failed iteration"
	case condCustomScript:
		return "when " + strings.Join(append([]string{c.Script}, c.Args...), " ") + " exits 0"
	case condUserSignal:
		return "on a stop request (s key, .stop file)"
	case condAll, condAny:
		parts := make([]string, len(c.Conditions))
		for i, s := range c.Conditions {
			parts[i] = strings.TrimPrefix(s.describe(), "when ")
		}
		word := " and "
		if c.Type == condAny {
			word = " or "
		}
		return "when (" + strings.Join(parts, word) + ")"
	case condNot:
		return "unless " + strings.TrimPrefix(c.Condition.describe(), "when ")
	case condNever:
		return "never"
	}
	return c.Type
}

// claimNotAccepted starts the reason of a task_complete condition whose
// completion the status file claims but the run did not accept; status and
// list show it so.
const claimNotAccepted = "claimed complete, not accepted: "

// condResult is one evaluation of a condition.
type condResult struct {
	Met      bool
	Progress float64 // 0..1
	Reason   string
}

func metResult(format string, args ...any) condResult {
	return condResult{Met: true, Progress: 1, Reason: fmt.Sprintf(format, args...)}
}

// ratio is the progress n/of, clamped to 0..1.
func ratio(n, of float64) float64 {
	if of <= 0 {
		return 0
	}
	return min(max(n/of, 0), 1)
}

// condState is what conditions are evaluated against, after an iteration.
type condState struct {
	Iteration      int           // iterations in this run
	Elapsed        time.Duration // of this run, time suspended excluded
	Cost           float64       // of this run, USD
	FailStreak     int           // consecutive failed iterations
	Failed         bool          // the last iteration failed
	Error          string        // and why
	ResultText     string        // the last iteration's final result text
	TaskComplete   bool          // .status.json says complete
	Claim          string        // else why the completion it claims does not count ("": none claimed)
	SinceProgress  int           // iterations since the last progress
	ProgressWord   string        // "progress" or "work", for the stagnation reason
	Tests          *testResults  // the last test run, nil if none ran
	TestFailStreak int           // consecutive failing test runs
	StopRequest    string        // "" or where a stop request came from
	Dir            string        // the project root: relative paths start here

	// RunScript runs a custom_script condition's script and reports whether
	// it exited 0, with a reason.
	RunScript func(c *condition) (bool, string)
}

// evaluate evaluates c against s.
func (c *condition) evaluate(s *condState) condResult {
	switch c.Type {
	case condMaxIterations:
		if s.Iteration >= c.Count {
			return metResult("max iterations reached (%d/%d)", s.Iteration, c.Count)
		}
		return condResult{Progress: ratio(float64(s.Iteration), float64(c.Count)), Reason: fmt.Sprintf("iteration %d of %d", s.Iteration, c.Count)}
	case condMaxDuration:
		if s.Elapsed >= c.Duration {
			return metResult("max duration reached (%s)", shortDuration(c.Duration))
		}
		return condResult{Progress: ratio(float64(s.Elapsed), float64(c.Duration)), Reason: fmt.Sprintf("%s of %s", roundDuration(s.Elapsed), shortDuration(c.Duration))}
	case condMaxCost:
		if s.Cost >= c.USD {
			return metResult("max cost reached (%s of %s)", formatUSD(s.Cost), formatUSD(c.USD))
		}
		return condResult{Progress: ratio(s.Cost, c.USD), Reason: fmt.Sprintf("%s of %s", formatUSD(s.Cost), formatUSD(c.USD))}
	case condFailureStreak:
		if s.FailStreak >= c.Count {
			return metResult("%s", plural(s.FailStreak, "consecutive failed iteration"))
		}
		return condResult{Progress: ratio(float64(s.FailStreak), float64(c.Count)), Reason: fmt.Sprintf("%d of %s in a row", s.FailStreak, plural(c.Count, "failed iteration"))}
	case condTestFailureStreak:
		if s.TestFailStreak >= c.Count {
			return metResult("%s", plural(s.TestFailStreak, "consecutive failing test run"))
		}
		return condResult{Progress: ratio(float64(s.TestFailStreak), float64(c.Count)), Reason: fmt.Sprintf("%d of %s in a row", s.TestFailStreak, plural(c.Count, "failing test run"))}
	case condAllTestsPass:
		t := s.Tests
		if t == nil {
			return condResult{Reason: "no test run yet"}
		}
		if t.allPass() {
			return metResult("all tests pass (%s)", t.summary())
		}
		return condResult{Progress: ratio(float64(t.Passed), float64(t.Passed+t.Failed)), Reason: t.summary()}
	case condSpecificTestsPass:
		t := s.Tests
		if t == nil {
			return condResult{Reason: "no test run yet"}
		}
		if t.names == nil {
			return condResult{Reason: "the test output names no tests (want go test -json, go test -v or TAP)"}
		}
		var waiting []string
		for _, name := range c.Tests {
			if !t.names[name] {
				waiting = append(waiting, name)
			}
		}
		if len(waiting) == 0 {
			return metResult("tests pass: %s", strings.Join(c.Tests, ", "))
		}
		n := len(c.Tests) - len(waiting)
		return condResult{Progress: ratio(float64(n), float64(len(c.Tests))), Reason: fmt.Sprintf("%d of %d pass; waiting for %s", n, len(c.Tests), clip(strings.Join(waiting, ", "), 200))}
	case condNoProgress:
		word := firstNonEmpty(s.ProgressWord, "progress")
		if s.SinceProgress >= c.Iterations {
			return metResult("stagnation (%s without %s)", plural(s.SinceProgress, "iteration"), word)
		}
		return condResult{Progress: ratio(float64(s.SinceProgress), float64(c.Iterations)), Reason: fmt.Sprintf("%d of %s without %s", s.SinceProgress, plural(c.Iterations, "iteration"), word)}
	case condTaskComplete:
		if s.TaskComplete {
			return metResult("task marked complete in %s", statusFile)
		}
		if s.Claim != "" {
			return condResult{Reason: claimNotAccepted + s.Claim}
		}
		return condResult{Reason: "not marked complete"}
	case condOutputPattern:
		if c.matches(s.ResultText) {
			if c.IsRegex {
				return metResult("output matched /%s/", c.Pattern)
			}
			return metResult("output matched %q", c.Pattern)
		}
		if c.IsRegex {
			return condResult{Reason: fmt.Sprintf("no match for /%s/ in the last result", clip(c.Pattern, 40))}
		}
		return condResult{Reason: fmt.Sprintf("no %q in the last result", clip(c.Pattern, 40))}
	case condFileCreated:
		path := resolvePath(s.Dir, c.Path)
		if _, err := os.Stat(path); err != nil {
			return condResult{Reason: c.Path + " does not exist"}
		}
		if c.start.unchanged(path) {
			if c.start.at == 0 {
				return condResult{Reason: c.Path + " exists " + c.start.since()}
			}
			return condResult{Reason: c.Path + " " + c.start.since()}
		}
		return metResult("%s exists", c.Path)
	case condFileContains:
		path := resolvePath(s.Dir, c.Path)
		found, err := fileContains(path, c.Content)
		switch {
		case found && c.start.unchanged(path):
			return condResult{Reason: fmt.Sprintf("%s contains %q %s", c.Path, c.Content, c.start.since())}
		case found:
			return metResult("%s contains %q", c.Path, c.Content)
		case errors.Is(err, os.ErrNotExist):
			return condResult{Reason: c.Path + " does not exist"}
		case err != nil:
			return condResult{Reason: fmt.Sprintf("cannot read %s: %v", c.Path, unwrapPathError(err))}
		}
		return condResult{Reason: fmt.Sprintf("%s does not contain %q", c.Path, c.Content)}
	case condOnError:
		if s.Failed && strings.Contains(s.Error, c.Pattern) {
			return metResult("iteration failed: %s", clip(s.Error, 300))
		}
		if s.Failed {
			return condResult{Reason: "the error does not match"}
		}
		return condResult{Reason: "no error"}
	case condCustomScript:
		if s.RunScript == nil {
			return condResult{Reason: "not run"}
		}
		if ok, why := s.RunScript(c); ok {
			return metResult("%s", why)
		} else {
			return condResult{Reason: why}
		}
	case condUserSignal:
		if s.StopRequest != "" {
			return metResult("stop requested (%s)", s.StopRequest)
		}
		return condResult{Reason: "no stop requested"}
	case condAll:
		var sum float64
		var reasons []string
		all := true
		for _, sub := range c.Conditions {
			r := sub.evaluate(s)
			sum += r.Progress
			all = all && r.Met
			reasons = append(reasons, r.Reason)
		}
		if all {
			return metResult("%s", strings.Join(reasons, " and "))
		}
		return condResult{Progress: sum / float64(len(c.Conditions)), Reason: strings.Join(reasons, "; ")}
	case condAny:
		var best float64
		var reasons []string
		for _, sub := range c.Conditions {
			r := sub.evaluate(s)
			if r.Met {
				return r
			}
			best = max(best, r.Progress)
			reasons = append(reasons, r.Reason)
		}
		return condResult{Progress: best, Reason: strings.Join(reasons, "; ")}
	case condNot:
		r := c.Condition.evaluate(s)
		if r.Met {
			return condResult{Reason: r.Reason}
		}
		return metResult("not met: %s", r.Reason)
	}
	return condResult{Reason: "never met"}
}

// matches reports whether text holds c's pattern.
func (c *condition) matches(text string) bool {
	if c.IsRegex {
		if c.re == nil {
			c.re = regexp.MustCompile(c.Pattern) // checked when decoded
		}
		return c.re.MatchString(text)
	}
	return strings.Contains(text, c.Pattern)
}

// walk calls fn for c and every condition inside it.
func (c *condition) walk(fn func(*condition)) {
	fn(c)
	for _, sub := range c.Conditions {
		sub.walk(fn)
	}
	if c.Condition != nil {
		c.Condition.walk(fn)
	}
}

// stopSet is the run's conditions: the configured ones, those built from
// flags, and the loop's own.
type stopSet struct {
	cfg stopConfig
	// ordered is every top-level condition in the order they are checked.
	ordered []groupedCondition
}

type groupedCondition struct {
	group string
	c     *condition
}

// order sorts the top-level conditions: by group, then by priority, ties
// in the order they were given.
func (s *stopSet) order() {
	s.ordered = s.ordered[:0]
	for _, g := range groupOrder {
		list := slices.Clone(s.cfg.group(g))
		slices.SortStableFunc(list, func(a, b *condition) int { return b.priority() - a.priority() })
		for _, c := range list {
			s.ordered = append(s.ordered, groupedCondition{g, c})
		}
	}
}

// stopVerdict is the outcome of evaluating a stopSet.
type stopVerdict struct {
	met     *groupedCondition // the condition that ends the run, if any
	reason  string
	reports []condReport
}

// evaluate evaluates every condition against st.
func (s *stopSet) evaluate(st *condState) stopVerdict {
	var v stopVerdict
	for i := range s.ordered {
		gc := &s.ordered[i]
		r := gc.c.evaluate(st)
		v.reports = append(v.reports, condReport{Group: gc.group, Type: gc.c.Type, Condition: gc.c.describe(), Met: r.Met, Progress: r.Progress, Reason: r.Reason})
		if r.Met && v.met == nil {
			v.met, v.reason = gc, r.Reason
		}
	}
	return v
}

// initialReports are the reports before the first evaluation.
func (s *stopSet) initialReports() []condReport {
	var out []condReport
	for _, gc := range s.ordered {
		out = append(out, condReport{Group: gc.group, Type: gc.c.Type, Condition: gc.c.describe(), Reason: "not evaluated yet"})
	}
	return out
}

// endingFor is the run's ending when gc is met for reason.
func endingFor(gc *groupedCondition, reason string) ending {
	switch gc.group {
	case groupFailure:
		return ending{code: exitError, reason: "failed: " + reason, status: statusFailed}
	case groupSuccess:
		return ending{code: exitOK, reason: "completed: " + reason, status: statusCompleted}
	}
	return ending{code: exitOK, reason: "stopped: " + reason, status: statusStopped}
}
