package main

// This file holds the formatting helpers every view shares: durations,
// clock times, money, sizes, plurals and lists, and text clipped to a
// number of bytes or of terminal columns. The rules are: a helper here
// knows no domain (no workspace, record or run); what formats one domain's
// value (a record's cost line, a denial, a run's state) stays with its
// owner and calls these.

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// shortDuration formats d without trailing zero units: 1h30m, not 1h30m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// formatUSD formats an amount with two to four decimals: $2.00, $0.025.
func formatUSD(x float64) string {
	s := strings.TrimRight(strconv.FormatFloat(x, 'f', 4, 64), "0")
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 < 2 {
		s += strings.Repeat("0", 2-(len(s)-i-1))
	}
	return "$" + s
}

// plural is "1 iteration", "2 iterations".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// formatCost shows an amount as iterations show it: $0.0123. Every view of
// a cost (lines, panel, watch, notifications, reset) uses it, so that no
// view rounds to $0.00 what another shows as $0.0037.
func formatCost(x float64) string {
	return fmt.Sprintf("$%.4f", x)
}

// costText is a cost as every view shows it: formatCost, marked "≈" when
// it is (in part) estimated from tokens (codex reports no dollars), the
// same mark on the progress line, the run's end, history, status, the
// panel, ps and notifications.
func costText(x float64, estimated bool) string {
	if estimated {
		return "≈" + formatCost(x)
	}
	return formatCost(x)
}

// lastLines joins the last n lines of s with " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// formatEpoch shows epoch seconds as a local clock time.
func formatEpoch(sec int64) string {
	if sec <= 0 {
		return "an unknown time"
	}
	return time.Unix(sec, 0).Local().Format("15:04 MST, Jan 2")
}

// formatClock shows t in local time with its zone, with the date when it is
// not on now's day.
func formatClock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05 MST")
	}
	return t.Format("Mon Jan 2 15:04:05 MST")
}

// workDuration is compactDuration for the time some work took (an
// iteration, its average, a run's): work under half a second is "<1s",
// never "0s", which reads as none.
func workDuration(d time.Duration) string {
	if d > 0 && d < time.Second/2 {
		return "<1s"
	}
	return compactDuration(d)
}

// compactDuration shows d as "42s", "5m42s", "1h05m" or "2d03h".
func compactDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
}

// displayWidth is the number of terminal columns s takes. Escape sequences
// are not expected (the agent's text is sanitized); wide East Asian
// characters and emoji take two columns, combining marks none.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth is the number of columns r takes on a terminal.
func runeWidth(r rune) int {
	switch {
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return 0
	case r < 0x300:
		return 1
	case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200b || r == 0x200d || (r >= 0xfe00 && r <= 0xfe0f):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0x303e, r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff, r >= 0xa000 && r <= 0xa4cf,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff, r >= 0x1f680 && r <= 0x1f6ff, r >= 0x20000 && r <= 0x3fffd,
		r == 0x2705, r == 0x274c, r == 0x2b50, r == 0x23f3, r == 0x231b:
		return 2
	}
	return 1
}

// clipWidth shortens s to at most w columns, ending it with "…" when it
// was cut.
func clipWidth(s string, w int) string {
	if displayWidth(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	n := 0
	for i, r := range s {
		rw := runeWidth(r)
		if n+rw > w-1 {
			return s[:i] + "…"
		}
		n += rw
	}
	return s
}

// wrapWidth breaks s (one line) into lines of at most first columns for
// the first and rest for the others, after a space or a slash (a path's
// boundary), a word longer than a line cut where it must; at most
// maxLines lines (0: any), the last ending in "…" when text remains.
func wrapWidth(s string, first, rest, maxLines int) []string {
	var lines []string
	w := max(first, 1)
	for displayWidth(s) > w {
		if maxLines > 0 && len(lines) == maxLines-1 {
			break
		}
		cut, col, hard := -1, 0, len(s)
		for i, r := range s {
			if col+runeWidth(r) > w {
				if r == ' ' {
					cut = i // the line ends with a word
				}
				hard = i
				break
			}
			col += runeWidth(r)
			if (r == ' ' || r == '/') && i > 0 {
				cut = i + 1
			}
		}
		if cut <= 0 {
			cut = hard
		}
		if cut == 0 { // one rune wider than the line
			_, cut = utf8.DecodeRuneInString(s)
		}
		lines = append(lines, strings.TrimRight(s[:cut], " "))
		s = strings.TrimLeft(s[cut:], " ")
		w = max(rest, 1)
	}
	return append(lines, clipWidth(s, w))
}

// stripSGR removes the colour sequences the panel itself writes.
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] == ';' || (s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			if j < len(s) {
				j++
			}
			i = j
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// clip shortens s to about n bytes, on a rune boundary, saying how much was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return clipKnown(s, n, len(s))
}

// clipKnown is clip for a string of which p, longer than n bytes, is a
// prefix and size the length.
// The marker never takes more than what it hides: the cut moves earlier
// until it hides at least the marker's length (so the clipped text is
// never longer than the whole), and a string too short for that is kept
// whole.
func clipKnown(p string, n, size int) string {
	cut := n
	for {
		m := len(fmt.Sprintf("… (%d more bytes)", size-cut))
		if size-cut >= m {
			break
		}
		if cut = size - m; cut <= 0 {
			if len(p) >= size {
				return p[:size]
			}
			cut = 0
			break
		}
	}
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", p[:cut], size-cut)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func formatBytes(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

// byteSize shows a size in bytes, KiB, MiB or GiB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// andList is "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// wrapParts breaks a line of parts joined by sep into lines of at most
// width columns (0: any), at the separators; the lines after the first
// are indented by two spaces.
func wrapParts(line, sep string, width int) []string {
	if width <= 0 || displayWidth(line) <= width {
		return []string{line}
	}
	var out []string
	cur := ""
	for _, part := range strings.Split(line, sep) {
		switch {
		case cur == "":
			cur = part
		case displayWidth(cur+sep+part) <= width:
			cur += sep + part
		default:
			out = append(out, cur)
			cur = "  " + part
		}
	}
	return append(out, cur)
}

// outputWidth is the width the command's output should fit: $COLUMNS
// when set, else the terminal's when standard output is one, else 0 (a
// pipe or a file: any).
func outputWidth(out io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f := terminalBehind(out); f != nil && isTerminal(f) {
		return terminalWidth(f)
	}
	return 0
}

// foldWords folds text to lines of at most width columns, at most n of
// them, a word longer than the width clipped.
func foldWords(text string, width, n int) []string {
	var lines []string
	for _, word := range strings.Fields(text) {
		last := len(lines) - 1
		if last >= 0 && displayWidth(lines[last])+1+displayWidth(word) <= width {
			lines[last] += " " + word
			continue
		}
		if len(lines) == n {
			break
		}
		lines = append(lines, clipWidth(word, width))
	}
	return lines
}
