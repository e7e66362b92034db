package main

// This file implements a small terminal emulator for the pty harness: it
// replays what a terminal received and shows the text a person would see,
// so that a scenario can assert that a panel left no fragment behind, also
// across width changes. It knows what the tool and bash write — printable
// text with soft wrapping at the right margin, CR, LF, BS, TAB, cursor up
// and down (CSI A, B), column moves (CSI G, C, D), erase line and erase to
// the end of the screen (CSI K, J) — and skips every other escape
// sequence. On a resize it re-wraps the lines as most terminals (VTE,
// kitty, iTerm2, tmux) do. The screen has no height: the scrollback and the
// screen are one list of rows — unless newTmuxScreen gives it one, with
// tmux's rules: the cursor keeps its screen row across a re-wrap (the rows
// pushed above the screen go to the scrollback, out of the cursor's
// reach), cursor moves stop at the screen's edges, and erasing the whole
// screen (CSI J at its top left) first copies it to the scrollback
// (tmux's scroll-on-clear, on by default).

import (
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

// vtRow is one row of cells; cont marks a row that continues the one above
// (a soft wrap).
type vtRow struct {
	cells []rune // 0 marks the second half of a wide character
	cont  bool
}

// vtScreen is the emulated terminal.
type vtScreen struct {
	width  int
	rows   []vtRow
	cy, cx int
	// pending: the last column was written; the next character wraps.
	pending bool
	// height is the screen's rows (0: no height); top is the index in
	// rows of the screen's first row.
	height, top int
}

// newTmuxScreen is a screen of width×height with tmux's rules.
func newTmuxScreen(width, height int) *vtScreen {
	return &vtScreen{width: width, height: height, rows: []vtRow{{}}}
}

func newVTScreen(width int) *vtScreen {
	return &vtScreen{width: width, rows: []vtRow{{}}}
}

// write interprets p.
func (s *vtScreen) write(p []byte) {
	text := string(p)
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == 0x1b:
			i = s.escape(text, i)
			continue
		case c == '\r':
			s.cx, s.pending = 0, false
		case c == '\n':
			s.lineFeed(false)
		case c == '\b':
			if s.cx > 0 {
				s.cx--
			}
			s.pending = false
		case c == '\t':
			s.cx = min(s.width-1, (s.cx/8+1)*8)
		case c < 0x20 || c == 0x7f:
			// Other controls (BEL …) move nothing.
		default:
			r, size := utf8.DecodeRuneInString(text[i:])
			s.put(r)
			i += size
			continue
		}
		i++
	}
}

// lineFeed moves to the next row, making it if needed.
func (s *vtScreen) lineFeed(soft bool) {
	s.cy++
	s.pending = false
	if s.cy == len(s.rows) {
		s.rows = append(s.rows, vtRow{cont: soft})
	} else if soft {
		s.rows[s.cy].cont = true
	}
	if s.height > 0 && s.cy >= s.top+s.height {
		s.top = s.cy - s.height + 1 // scrolled
	}
}

// put writes one character at the cursor.
func (s *vtScreen) put(r rune) {
	w := runeWidth(r)
	if w == 0 {
		return
	}
	if s.pending || s.cx+w > s.width {
		s.lineFeed(true)
		s.cx = 0
	}
	row := &s.rows[s.cy]
	for len(row.cells) < s.cx+w {
		row.cells = append(row.cells, ' ')
	}
	row.cells[s.cx] = r
	if w == 2 {
		row.cells[s.cx+1] = 0
	}
	s.cx += w
	if s.cx >= s.width {
		s.cx, s.pending = s.width-1, true
	}
}

// escape interprets the escape sequence at text[i], returning the index
// after it.
func (s *vtScreen) escape(text string, i int) int {
	if i+1 >= len(text) {
		return len(text)
	}
	switch text[i+1] {
	case '[':
		j := i + 2
		for j < len(text) && (text[j] < 0x40 || text[j] > 0x7e) {
			j++
		}
		if j >= len(text) {
			return len(text)
		}
		s.csi(text[i+2:j], text[j])
		return j + 1
	case ']': // OSC, to BEL or ST
		for j := i + 2; j < len(text); j++ {
			if text[j] == 0x07 {
				return j + 1
			}
			if text[j] == 0x1b && j+1 < len(text) && text[j+1] == '\\' {
				return j + 2
			}
		}
		return len(text)
	}
	return i + 2
}

// csi runs one control sequence.
func (s *vtScreen) csi(params string, final byte) {
	n := 1
	if v, err := strconv.Atoi(strings.TrimLeft(params, "?")); err == nil {
		n = v
	}
	switch final {
	case 'A':
		s.cy = max(s.top, s.cy-max(n, 1))
		s.pending = false
	case 'B':
		for k := 0; k < max(n, 1); k++ {
			if s.height > 0 && s.cy == s.top+s.height-1 {
				break // the bottom: CSI B does not scroll
			}
			s.lineFeed(false)
		}
	case 'C':
		s.cx = min(s.width-1, s.cx+max(n, 1))
		s.pending = false
	case 'D':
		s.cx = max(0, s.cx-max(n, 1))
		s.pending = false
	case 'G':
		s.cx = min(s.width-1, max(n, 1)-1)
		s.pending = false
	case 'K':
		row := &s.rows[s.cy]
		switch params {
		case "", "0":
			if s.cx < len(row.cells) {
				row.cells = row.cells[:s.cx]
			}
		case "2":
			row.cells = nil
		}
	case 'J':
		if params == "" || params == "0" {
			if s.height > 0 && s.cy == s.top && s.cx == 0 {
				// The whole screen: tmux keeps a copy in the scrollback.
				screen := make([]vtRow, len(s.rows)-s.top)
				for i, r := range s.rows[s.top:] {
					screen[i] = vtRow{cells: append([]rune(nil), r.cells...), cont: r.cont}
				}
				s.rows = append(s.rows[:s.top:s.top], append(screen, s.rows[s.top:]...)...)
				s.top += len(screen)
				s.cy += len(screen)
			}
			row := &s.rows[s.cy]
			if s.cx < len(row.cells) {
				row.cells = row.cells[:s.cx]
			}
			s.rows = s.rows[:s.cy+1]
		}
	}
}

// resize re-wraps the rows to width, keeping the cursor on its character.
func (s *vtScreen) resize(width int) {
	type logical struct {
		cells []rune
		// cursor offset in cells, or -1
		cursor int
	}
	var lines []logical
	screenY := s.cy - s.top
	for i, r := range s.rows {
		if !r.cont || len(lines) == 0 {
			lines = append(lines, logical{cursor: -1})
		}
		l := &lines[len(lines)-1]
		if i == s.cy {
			l.cursor = len(l.cells) + s.cx
		}
		cells := r.cells
		if i+1 < len(s.rows) && s.rows[i+1].cont {
			// A wrapped row is full: pad it to the old width.
			for len(cells) < s.width {
				cells = append(cells, ' ')
			}
		}
		l.cells = append(l.cells, cells...)
	}
	s.width = width
	s.rows = nil
	for _, l := range lines {
		cells := []rune(strings.TrimRight(string(l.cells), " "))
		if len(cells) == 0 {
			cells = nil
		}
		first := len(s.rows)
		for start := 0; ; start += width {
			end := min(len(cells), start+width)
			s.rows = append(s.rows, vtRow{cells: append([]rune(nil), cells[start:end]...), cont: start > 0})
			if end >= len(cells) {
				break
			}
		}
		if l.cursor >= 0 {
			s.cy = first + l.cursor/width
			s.cx = l.cursor % width
			for s.cy >= len(s.rows) {
				s.rows = append(s.rows, vtRow{cont: true})
			}
		}
	}
	if len(s.rows) == 0 {
		s.rows = []vtRow{{}}
	}
	if s.height > 0 {
		s.top = max(0, s.cy-screenY) // tmux keeps the cursor's screen row
	}
	s.pending = false
}

// text is what the screen shows, row by row, trailing blanks dropped.
func (s *vtScreen) text() string {
	var b strings.Builder
	for _, r := range s.rows {
		var line []rune
		for _, c := range r.cells {
			if c != 0 {
				line = append(line, c)
			}
		}
		b.WriteString(strings.TrimRight(string(line), " "))
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// vtResize is a width change, at an offset of the terminal's output.
type vtResize struct {
	offset, cols int
}

// termResize sets the terminal's size (the kernel sends SIGWINCH to its
// foreground job).
//
//	term resize COLS ROWS
func termResize(ts *testscript.TestScript, s *termSession, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: term resize COLS ROWS")
	}
	cols, err1 := strconv.Atoi(args[0])
	rows, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil || cols < 10 || rows < 2 {
		ts.Fatalf("term resize: bad size %s %s", args[0], args[1])
	}
	s.mu.Lock()
	s.resizes = append(s.resizes, vtResize{offset: s.screen.Len(), cols: cols})
	s.mu.Unlock()
	if err := pty.Setsize(s.master, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		ts.Fatalf("term resize: %v", err)
	}
}

// termScreen writes what a person sees on the terminal (scrollback
// included) to FILE, or with -raw the bytes it received.
//
//	term screen [-raw] FILE
func termScreen(ts *testscript.TestScript, s *termSession, args []string) {
	raw := len(args) == 2 && args[0] == "-raw"
	if raw {
		args = args[1:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: term screen [-raw] FILE")
	}
	s.mu.Lock()
	data := append([]byte(nil), s.screen.Bytes()...)
	resizes := append([]vtResize(nil), s.resizes...)
	s.mu.Unlock()
	out := data
	if !raw {
		vt := newVTScreen(termCols)
		at := 0
		for _, r := range resizes {
			vt.write(data[at:r.offset])
			vt.resize(r.cols)
			at = r.offset
		}
		vt.write(data[at:])
		out = []byte(vt.text())
	}
	if err := os.WriteFile(ts.MkAbs(args[0]), out, 0o644); err != nil {
		ts.Fatalf("term screen: %v", err)
	}
}
