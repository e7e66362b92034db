package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// panelNow is the time the panel tests render at.
var panelNow = time.Date(2025, 10, 16, 14, 30, 0, 0, time.UTC)

// testState is a run in its third iteration, running go test.
func testState() *runState {
	return &runState{
		PID: 4242, Workspace: "demo", Mode: modeLoop, Started: panelNow.Add(-110 * time.Second),
		Phase: phaseRunning, Iteration: 3, Totals: workTotals{Iterations: 2, DurationMS: 56000, CostUSD: 0.42}, Max: 50, IterStarted: panelNow.Add(-50 * time.Second),
		Tasks: &progressRep{35, 60}, Keyboard: true, Updated: panelNow.Add(-2 * time.Second),
		Activity: activity{Kind: actTool, Tool: "Bash", Arg: "go test ./...", Since: panelNow.Add(-42 * time.Second)},
	}
}

func TestRenderPanel(t *testing.T) {
	stopped := testState()
	stopped.StopSource = stopByKeyboard
	limit := testState()
	limit.Phase, limit.WaitUntil = phaseLimit, panelNow.Add(58*time.Minute+12*time.Second)
	for _, tc := range []struct {
		name  string
		st    *runState
		o     panelOpts
		lines []string
	}{
		{"wide", testState(), panelOpts{width: 100}, []string{
			"● running iteration 3  [█░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░]  2/50 (4%)",
			"Elapsed 1m50s · ETA ~11m58s · Avg 28s · Mode loop · Tasks 35/60 · Cost $0.4200 · updated 2s ago",
			"Now: Bash: go test ./... · 42s",
			"Press s to toggle stop",
		}},
		{"narrow", testState(), panelOpts{width: 40}, []string{
			"● running iteration 3 2/50 (4%)",
			"Elapsed 1m50s · Tasks 35/60",
			"Now: Bash: go test ./... · 42s",
			"Press s to toggle stop",
		}},
		{"very narrow", testState(), panelOpts{width: 24}, []string{
			"● running iteration 3",
			"Elapsed 1m50s",
			"Now: Bash: go test ./.…",
			"Press s to toggle stop",
		}},
		{"stop requested", stopped, panelOpts{width: 100}, []string{
			"● stopping after iteration 3  [█░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░]  2/50 (4%)",
			"Elapsed 1m50s · ETA ~11m58s · Avg 28s · Mode loop · Tasks 35/60 · Cost $0.4200 · updated 2s ago",
			"Now: Bash: go test ./... · 42s",
			"Stop requested (press s to cancel) · from the s key",
			"Press s to toggle stop",
		}},
		{"usage limit", limit, panelOpts{width: 100}, []string{
			"● waiting for the usage-limit reset  [█░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░]  2/50 (4%)",
			"Elapsed 1m50s · ETA ~12m08s · Avg 28s · Mode loop · Tasks 35/60 · Cost $0.4200 · updated 2s ago",
			"Now: Usage limit: retrying in 58m12s (s or Ctrl+C to stop)",
			"Press s to toggle stop",
		}},
		{"watch", stopped, panelOpts{width: 100, watch: true}, []string{
			"● stopping after iteration 3  [█░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░]  2/50 (4%)",
			"Elapsed 1m50s · ETA ~11m58s · Avg 28s · Mode loop · Tasks 35/60 · Cost $0.4200 · updated 2s ago",
			"Now: Bash: go test ./... · 42s",
			"Stop requested (claude-iterate stop --cancel to cancel) · from the s key",
			"Watching the run of demo (pid 4242); Ctrl+C stops watching, not the run",
		}},
		{"one line", stopped, panelOpts{width: 200, oneLine: true}, []string{
			"● stopping after iteration 3 · 2/50 · Stop requested (press s to cancel) · Bash: go test ./... · 42s · elapsed 1m50s · $0.4200 · tasks 35/60",
		}},
		{"one line narrow", stopped, panelOpts{width: 60, oneLine: true}, []string{
			"● stopping after iteration 3 · Stop requested (press s to …",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := renderPanel(tc.st, panelNow, tc.o)
			if strings.Join(got, "\n") != strings.Join(tc.lines, "\n") {
				t.Errorf("renderPanel =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.lines, "\n"))
			}
			for _, l := range got {
				if w := displayWidth(l); w > tc.o.width-1 {
					t.Errorf("line %q is %d columns wide; want at most %d", l, w, tc.o.width-1)
				}
			}
		})
	}
}

// Every width, every state: no line reaches the last column.
func TestRenderPanelFits(t *testing.T) {
	states := []*runState{testState(), {Phase: phaseStarting, Max: 5, Mode: modeIterative}}
	long := testState()
	long.Activity.Arg = strings.Repeat("日本語のコマンド ", 30)
	long.StopSource = stopByFile
	states = append(states, long)
	for _, st := range states {
		for w := 1; w <= 160; w++ {
			for _, o := range []panelOpts{{width: w}, {width: w, oneLine: true}, {width: w, color: true}, {width: w, watch: true}} {
				for _, l := range renderPanel(st, panelNow, o) {
					if got := displayWidth(stripSGR(l)); got > max(9, w-1) {
						t.Fatalf("width %d %+v: line %q is %d columns", w, o, l, got)
					}
				}
			}
		}
	}
}

func TestRenderPanelColour(t *testing.T) {
	lines := renderPanel(testState(), panelNow, panelOpts{width: 100, color: true})
	if !strings.Contains(lines[0], "\x1b[32m● running iteration 3\x1b[0m") {
		t.Errorf("header %q: want the state in green", lines[0])
	}
	plain := renderPanel(testState(), panelNow, panelOpts{width: 100})
	for i := range lines {
		if stripSGR(lines[i]) != plain[i] {
			t.Errorf("line %d: %q without colours is not %q", i, stripSGR(lines[i]), plain[i])
		}
	}
	if strings.Contains(strings.Join(plain, ""), "\x1b") {
		t.Errorf("plain panel has escape sequences: %q", plain)
	}
}

func TestCompactDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {-time.Second, "0s"}, {1499 * time.Millisecond, "1s"}, {42 * time.Second, "42s"},
		{342 * time.Second, "5m42s"}, {3900 * time.Second, "1h05m"}, {50 * time.Hour, "2d02h"},
	} {
		if got := compactDuration(tc.d); got != tc.want {
			t.Errorf("compactDuration(%v) = %q; want %q", tc.d, got, tc.want)
		}
	}
	// the time work took (the panel's Avg, history's TIME): never "0s"
	// for some
	for d, want := range map[time.Duration]string{0: "0s", time.Millisecond: "<1s", 499 * time.Millisecond: "<1s", 500 * time.Millisecond: "1s", 42 * time.Second: "42s"} {
		if got := workDuration(d); got != want {
			t.Errorf("workDuration(%v) = %q; want %q", d, got, want)
		}
	}
}

func TestDisplayWidthAndClip(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
		w     int
		clip  string
	}{
		{"abc", 3, 2, "a…"},
		{"日本語", 6, 5, "日本…"},
		{"e\u0301te", 3, 3, "e\u0301te"},
		{"🔧 Bash", 7, 4, "🔧 …"},
		{"", 0, 0, ""},
	} {
		if got := displayWidth(tc.s); got != tc.width {
			t.Errorf("displayWidth(%q) = %d; want %d", tc.s, got, tc.width)
		}
		if got := clipWidth(tc.s, tc.w); got != tc.clip {
			t.Errorf("clipWidth(%q, %d) = %q; want %q", tc.s, tc.w, got, tc.clip)
		}
	}
	if got := rowsTaken("\x1b[32m"+strings.Repeat("x", 90)+"\x1b[0m", 40); got != 3 {
		t.Errorf("rowsTaken(90 columns, 40) = %d; want 3", got)
	}
}

func TestActivity(t *testing.T) {
	now := panelNow
	tr := activityTracker{root: "/home/dev/project"}
	tr.reset(now)
	step := func(line string, at time.Duration, want string) {
		t.Helper()
		e, err := decodeEvent([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		a := tr.observe(e, now.Add(at))
		if got := a.text(now.Add(at + 3*time.Second)); got != want {
			t.Errorf("after %s: %q; want %q", line, got, want)
		}
	}
	step(`{"type":"system","subtype":"init","model":"m","tools":[]}`, 0, "thinking · 3s")
	step(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go test\n  ./..."}}]}}`, time.Second, "Bash: go test ./... · 3s")
	step(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/home/dev/project/src/app.go"}}]}}`, 2*time.Second, "Edit: src/app.go · 3s")
	step(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}}`, 3*time.Second, "Bash: go test ./... · 5s")
	step(`{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":8000,"error_status":529}`, 4*time.Second, "API retry 2/10 after 529, next in 5s")
	step(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`, 5*time.Second, "thinking · 3s")
	step(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"Read","input":{"file_path":"/etc/x\u001b]0;pwned\u0007"}}]}}`, 6*time.Second, `Read: /etc/x\x1b]0;pwned\x07 · 3s`)
	step(`{"type":"result","subtype":"success","result":"ok"}`, 7*time.Second, "result received; claude is exiting · 3s")
}

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text ✓ 日本\n\tindented", "plain text ✓ 日本\n\tindented"},
		{"\x1b[?1049h\x1b[?25l", `\x1b[?1049h\x1b[?25l`},
		{"\x1b]0;title\x07", `\x1b]0;title\x07`},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://x\x1b\link\x1b]8;;\x1b\`},
		{"\x1b[?1000h mouse", `\x1b[?1000h mouse`},
		{"line\r\nnext\r", "line\nnext\\r"},
		{"over\rwrite", `over\rwrite`},
		{"\u009b31m", `\u009b31m`},
		{"a\u202egnp.exe", `a\u202egnp.exe`},
		{"bad \xff byte", `bad \xff byte`},
		{"del\x7f bs\b", `del\u007f bs\x08`},
	} {
		if got := string(sanitize([]byte(tc.in))); got != tc.want {
			t.Errorf("sanitize(%q) = %q; want %q", tc.in, got, tc.want)
		}
		if got := sanitizeString(tc.in); got != tc.want {
			t.Errorf("sanitizeString(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
	clean := []byte("nothing to do here ✓\n")
	if got := sanitize(clean); &got[0] != &clean[0] {
		t.Errorf("sanitize copied a clean line")
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"\x1b[31mred", "ok\r\n", "\u009b", "\xff\xfe", "\u202e"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		out := sanitize(p)
		for i, b := range out {
			if (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f {
				t.Fatalf("sanitize(%q) = %q: control byte at %d", p, out, i)
			}
		}
		if bytes.Contains(out, []byte("\u009b")) || bytes.Contains(out, []byte("\u202e")) {
			t.Fatalf("sanitize(%q) = %q: a hidden control passed", p, out)
		}
	})
}

func TestStatusMessage(t *testing.T) {
	p := func(c, tot int, sum string, complete bool) taskStatus {
		return taskStatus{HasProgress: true, Completed: c, Total: tot, Summary: sum, Complete: complete}
	}
	prev := p(30, 60, "", false)
	for _, tc := range []struct {
		prev *taskStatus
		ts   taskStatus
		want string
	}{
		{&prev, p(35, 60, "Migrated the user endpoints", false), "35/60 items (+5) - Migrated the user endpoints"},
		{nil, p(35, 60, "", false), "35/60 items"},
		{&prev, p(60, 60, "All done", true), "60/60 items (+30) - All done ✅ Complete!"},
		{&prev, taskStatus{Summary: "line1\nline2"}, "line1 line2"},
		{&prev, taskStatus{}, "status updated"},
	} {
		if got := statusMessage(tc.prev, tc.ts); got != tc.want {
			t.Errorf("statusMessage(%+v) = %q; want %q", tc.ts, got, tc.want)
		}
	}
}

func TestRunStateRoundTrip(t *testing.T) {
	st := testState()
	st.Lines = []stateLine{{1, "▶ Iteration 3/50 started at 14:29:10"}}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back runState
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	a := renderPanel(st, panelNow, panelOpts{width: 100})
	b := renderPanel(&back, panelNow, panelOpts{width: 100})
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("the panel from the state file differs:\n%s\nwant\n%s", strings.Join(b, "\n"), strings.Join(a, "\n"))
	}
}

func TestVTScreen(t *testing.T) {
	vt := newVTScreen(20)
	vt.write([]byte("line one\r\nline two is long enough to wrap\r\n"))
	vt.write([]byte("panel 1\x1b[K\npanel 2\x1b[K\n"))
	vt.write([]byte("\r\x1b[2A\x1b[Jscrolled\r\npanel 3\n"))
	want := "line one\nline two is long eno\nugh to wrap\nscrolled\npanel 3\n"
	if got := vt.text(); got != want {
		t.Errorf("screen:\n%s\nwant\n%s", got, want)
	}
	vt.resize(10)
	want = "line one\nline two i\ns long eno\nugh to wra\np\nscrolled\npanel 3\n"
	if got := vt.text(); got != want {
		t.Errorf("after resize:\n%s\nwant\n%s", got, want)
	}
	vt.write([]byte("\r\x1b[1A\x1b[Jgone\n"))
	if got := vt.text(); !strings.HasSuffix(got, "scrolled\ngone\n") {
		t.Errorf("after erase:\n%s", got)
	}
}

// TestPanelETACountsTheDelay: the ETA counts the delay between iterations
// (issue 19: it left it out, 25-50 % low). Iterations of 20s, 10s apart.
func TestPanelETACountsTheDelay(t *testing.T) {
	start := panelNow.Add(-time.Hour)
	for _, tc := range []struct {
		name string
		st   runState
		now  time.Time
		want time.Duration
	}{
		// Iteration 3 of 10 running for 5s: 15s of it, then 7 × (10s + 20s).
		{"running", runState{Mode: modeIterative, Started: start, Phase: phaseRunning, Iteration: 3, Totals: workTotals{Iterations: 2, DurationMS: 40000}, Max: 10,
			IterStarted: start.Add(60 * time.Second)}, start.Add(65 * time.Second), 225 * time.Second},
		// 5s into the delay after iteration 2: 5s, then 8 × 20s and 7 × 10s.
		{"delay", runState{Mode: modeIterative, Started: start, Phase: phaseDelay, Iteration: 2, Totals: workTotals{Iterations: 2, DurationMS: 40000}, Max: 10,
			IterStarted: start.Add(30 * time.Second), WaitUntil: start.Add(60 * time.Second)}, start.Add(55 * time.Second), 235 * time.Second},
		// 5s into the first delay: no cycle measured yet; the delay left,
		// then 9 × 20s.
		{"first delay", runState{Mode: modeIterative, Started: start, Phase: phaseDelay, Iteration: 1, Totals: workTotals{Iterations: 1, DurationMS: 20000}, Max: 10,
			IterStarted: start, WaitUntil: start.Add(30 * time.Second)}, start.Add(25 * time.Second), 185 * time.Second},
		// The last iteration running: no delay after it.
		{"last", runState{Mode: modeIterative, Started: start, Phase: phaseRunning, Iteration: 3, Totals: workTotals{Iterations: 2, DurationMS: 40000}, Max: 3,
			IterStarted: start.Add(60 * time.Second)}, start.Add(65 * time.Second), 15 * time.Second},
		// Suspended for a minute: not part of a cycle.
		{"suspended", runState{Mode: modeIterative, Started: start, SuspendedMS: 60000, Phase: phaseRunning, Iteration: 3, Totals: workTotals{Iterations: 2, DurationMS: 40000}, Max: 10,
			IterStarted: start.Add(120 * time.Second)}, start.Add(125 * time.Second), 225 * time.Second},
	} {
		got, ok := panelETA(&tc.st, tc.now)
		if !ok || got != tc.want {
			t.Errorf("%s: panelETA = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
}

// TestWrapWidth: lines break after a space or a slash, a word longer than
// a line is cut, and text past maxLines ends the last line in "…".
func TestWrapWidth(t *testing.T) {
	for _, c := range []struct {
		s           string
		first, rest int
		max         int
		want        []string
	}{
		{"short", 10, 10, 0, []string{"short"}},
		{"Which DB at 16:07:21? Postgres", 21, 10, 0, []string{"Which DB at 16:07:21?", "Postgres"}},
		{"claude-iterate/workspaces/wc", 20, 20, 0, []string{"claude-iterate/", "workspaces/wc"}},
		{"abcdefghij", 4, 4, 0, []string{"abcd", "efgh", "ij"}},
		{"one two three four five", 8, 8, 2, []string{"one two", "three f…"}},
	} {
		if got := wrapWidth(c.s, c.first, c.rest, c.max); !slices.Equal(got, c.want) {
			t.Errorf("wrapWidth(%q, %d, %d, %d) = %q, want %q", c.s, c.first, c.rest, c.max, got, c.want)
		}
	}
}

// TestSuspendedState: a run suspended (Ctrl+Z) is "suspended" in every
// view, and its elapsed time stops where it was suspended, its earlier
// suspensions left out; once it goes on, it counts again.
func TestSuspendedState(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := &runState{Started: start, SuspendedMS: 10_000, Phase: phaseRunning, Iteration: 2, Suspended: start.Add(70 * time.Second)}
	later := start.Add(time.Hour)
	if got := st.elapsed(later); got != time.Minute {
		t.Errorf("elapsed while suspended = %v, want 1m (stopped at the suspension)", got)
	}
	if got := stateOf(st, true); got != runStateSuspended {
		t.Errorf("stateOf = %q, want %q", got, runStateSuspended)
	}
	if label, _ := stateLabel(st); label != "suspended" {
		t.Errorf("stateLabel = %q, want suspended", label)
	}
	if now := nowText(st, later, true); !strings.HasPrefix(now, "since ") || !strings.Contains(now, "fg in its terminal goes on") {
		t.Errorf("nowText = %q", now)
	}
	st.Suspended = time.Time{}
	if got := st.elapsed(later); got != time.Hour-10*time.Second {
		t.Errorf("elapsed once resumed = %v, want 59m50s", got)
	}
	if got := stateOf(st, false); got != runStateRunning {
		t.Errorf("stateOf once resumed = %q", got)
	}
}
