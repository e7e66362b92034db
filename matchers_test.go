package main

import (
	"regexp"
	"testing"
)

// The workspace-name and colour-terminal checks are written by hand (no
// regexp compiled at start-up); these are the expressions they replace.
var (
	nameRefRE      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	colorTermRefRE = regexp.MustCompile(`color|^xterm|^screen|^tmux|^rxvt|^linux|^vt[0-9]*0-|^alacritty|^kitty|^foot|^wezterm|^ansi|^cygwin|^konsole|^putty|^st-|^st$|^iterm|^contour|^ghostty`)
)

var nameCases = []struct {
	name string
	want bool
}{
	{"a", true}, {"Z9", true}, {"0", true}, {"my-task_2.v1", true},
	{"", false}, {".", false}, {"..", false}, {".hidden", false}, {"-x", false}, {"_x", false},
	{"a/b", false}, {"../x", false}, {"a b", false}, {"é", false}, {"a\x00", false},
	{"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl", true},   // 64
	{"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm", false}, // 65
}

func TestValidName(t *testing.T) {
	for _, c := range nameCases {
		if got := validName(c.name); got != c.want {
			t.Errorf("validName(%q) = %v; want %v", c.name, got, c.want)
		}
		if ref := nameRefRE.MatchString(c.name); ref != c.want {
			t.Errorf("reference %q = %v; want %v", c.name, ref, c.want)
		}
	}
}

var termCases = []struct {
	term string
	want bool
}{
	{"xterm-256color", true}, {"xterm", true}, {"screen", true}, {"tmux-256color", true},
	{"linux", true}, {"st", true}, {"st-256color", true}, {"stx", false}, {"vt100", false},
	{"vt100-am", true}, {"vt220-8", true}, {"vt0-", true}, {"vt-", false}, {"vt10a-", false},
	{"vt101-x", false}, {"dumb", false}, {"", false}, {"foo-color", true}, {"ghostty", true},
	{"Xterm", false}, {"unknown", false},
}

func TestColorTerm(t *testing.T) {
	for _, c := range termCases {
		if got := colorTerm(c.term, ""); got != c.want {
			t.Errorf("colorTerm(%q, \"\") = %v; want %v", c.term, got, c.want)
		}
		if ref := colorTermRefRE.MatchString(c.term); ref != c.want {
			t.Errorf("reference %q = %v; want %v", c.term, ref, c.want)
		}
	}
	if !colorTerm("dumb", "truecolor") {
		t.Errorf("colorTerm(\"dumb\", \"truecolor\") = false; want true (COLORTERM set)")
	}
}

// FuzzMatchers checks the hand-written matchers against the expressions
// they replace.
func FuzzMatchers(f *testing.F) {
	for _, c := range nameCases {
		f.Add(c.name)
	}
	for _, c := range termCases {
		f.Add(c.term)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validName(s), nameRefRE.MatchString(s); got != want {
			t.Errorf("validName(%q) = %v; the expression says %v", s, got, want)
		}
		if got, want := colorTerm(s, ""), colorTermRefRE.MatchString(s); got != want {
			t.Errorf("colorTerm(%q) = %v; the expression says %v", s, got, want)
		}
	})
}
