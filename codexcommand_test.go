package main

import (
	"strings"
	"testing"
)

// TestCodexCommandShown: the script inside codex's shell wrapper, in each
// quoting the real CLI uses (testdata/fixtures/codex); anything else as is.
func TestCodexCommandShown(t *testing.T) {
	checkStrings(t, "codexCommandShown", codexCommandShown, map[string]string{
		`/bin/bash -lc 'cat TODO.md'`: `cat TODO.md`,
		`/bin/bash -lc ls`:            `ls`,
		`/bin/bash -lc "printf '{\"complete\": false}\\n' > .status.json"`: `printf '{"complete": false}\n' > .status.json`,
		`/bin/bash -lc 'echo x > report.txt; echo rc=$?'`:                  `echo x > report.txt; echo rc=$?`,
		`/bin/zsh -c 'go test ./...'`:                                      `go test ./...`,
		`bash -lc 'it'\''s'`:                                               `it's`,
		"/bin/bash -lc \"a \\$HOME \\` \\\\ b\"":                           "a $HOME ` \\ b",
		`/bin/bash -lc ''`:                                                 `/bin/bash -lc ''`,
		`/bin/bash -x 'ls'`:                                                `/bin/bash -x 'ls'`,
		`python3 -c 'print(1)'`:                                            `python3 -c 'print(1)'`,
		`/bin/bash -lc 'unterminated`:                                      `/bin/bash -lc 'unterminated`,
		`go test ./...`:                                                    `go test ./...`,
		``:                                                                 ``,
	})
}

// FuzzShellWords: splitting never panics, and words quoted the way codex
// quotes them (in single quotes, a single quote inside closed, escaped and
// reopened) come back whole.
func FuzzShellWords(f *testing.F) {
	f.Add("/bin/bash -lc 'cat TODO.md'", "it's \"x\" $y")
	f.Add(`"a\"b" c\ d`, "")
	f.Fuzz(func(t *testing.T, s, word string) {
		splitShellWords(s)
		codexCommandShown(s)
		quoted := "'" + strings.ReplaceAll(word, "'", `'\''`) + "'"
		words, ok := splitShellWords("/bin/sh -c " + quoted)
		if !ok || len(words) != 3 || words[2] != word {
			t.Fatalf("split of %q: %q, %v", quoted, words, ok)
		}
	})
}
