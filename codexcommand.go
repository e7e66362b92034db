package main

// This file shows codex's commands as the model wrote them. The real CLI
// (codex-cli 0.171.0) reports a command_execution's command as the argv it
// ran, shell-quoted and joined: "/bin/bash -lc 'go test ./...'", or with
// double quotes when the command holds a single quote ("/bin/bash -lc
// \"printf '…'\""). The activity line, the transcript and the refused
// calls show the script inside ("go test ./..."); any other command is
// shown as codex gave it.

import (
	"path/filepath"
	"strings"
)

// codexCommandShown is what the tool shows of codex's command: the script
// of a `SHELL -c SCRIPT` or `SHELL -lc SCRIPT` wrapper, else command.
func codexCommandShown(command string) string {
	words, ok := splitShellWords(command)
	if !ok || len(words) != 3 || (words[1] != "-c" && words[1] != "-lc") {
		return command
	}
	switch filepath.Base(words[0]) {
	case "bash", "sh", "zsh", "dash":
		if strings.TrimSpace(words[2]) != "" {
			return words[2]
		}
	}
	return command
}

// splitShellWords splits s into words as a POSIX shell reads quoting:
// bare words, '…' taken as is, "…" with \" \\ \$ \` escaped, and a
// backslash outside quotes escaping the next character. ok is false for an
// unterminated quote or a trailing backslash.
func splitShellWords(s string) (words []string, ok bool) {
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			inWord = true
			for i++; ; i++ {
				if i >= len(s) {
					return nil, false
				}
				if s[i] == '"' {
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			w.WriteByte(s[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, true
}
