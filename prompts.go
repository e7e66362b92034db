package main

// This file builds the prompts. The rules are: each mode has a system prompt
// (given with --append-system-prompt) and an iteration prompt (sent on
// stdin), embedded in the binary; a workspace may override either with
// <workspace>/prompts/<name>.md, a project with
// .claude-iterate/prompts/<mode>/<name>.md; the tokens {{projectRoot}},
// {{workspacePath}} and {{instructions}} are replaced. Ralph mode sends its
// prompt file verbatim, with no system prompt.

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

//go:embed prompts
var embeddedPrompts embed.FS

// promptTemplate returns the template name ("system" or "iteration") for
// mode, and where it came from.
func promptTemplate(w *workspace, projectRoot, mode, name string) (text, source string, err error) {
	for _, p := range []string{
		filepath.Join(w.Dir, "prompts", name+".md"),
		filepath.Join(projectRoot, ralphStateDir, "prompts", mode, name+".md"),
	} {
		data, err := readRegularFile(p, taskFileCap)
		if err == nil {
			return string(data), p, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("reading prompt template: %w", err)
		}
	}
	data, err := embeddedPrompts.ReadFile("prompts/" + mode + "/" + name + ".md")
	if err != nil {
		return "", "", fmt.Errorf("no built-in %s prompt for mode %q", name, mode)
	}
	return string(data), "built-in", nil
}

// expandPrompt replaces the template tokens.
func expandPrompt(tmpl, projectRoot, workspacePath, instructions string) string {
	return strings.NewReplacer(
		"{{projectRoot}}", projectRoot,
		"{{workspacePath}}", workspacePath,
		"{{instructions}}", strings.TrimRight(instructions, "\n"),
	).Replace(tmpl)
}

// fileCache re-reads a file only when it changed (size, modification time
// or identity): the loop builds its prompt every iteration, and the user
// may edit INSTRUCTIONS.md or PROMPT.md while it runs.
type fileCache struct {
	path string
	fi   os.FileInfo
	data []byte
}

// read returns path's content, from the cache when the file is unchanged.
func (c *fileCache) read(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		// Read anyway: a reader expects open's error ("open …"), and the
		// file may have appeared since.
		data, err := readRegularFile(path, taskFileCap)
		if err == nil {
			err = taskText(data)
		}
		return data, err
	}
	if c.fi != nil && c.path == path && os.SameFile(c.fi, fi) && fi.Size() == c.fi.Size() && fi.ModTime().Equal(c.fi.ModTime()) {
		return c.data, nil
	}
	data, err := readRegularFile(path, taskFileCap)
	if err == nil {
		err = taskText(data)
	}
	if err != nil {
		return nil, err
	}
	c.path, c.fi, c.data = path, fi, data
	return data, nil
}

// errNotText is a task or prompt file that is not UTF-8 text.
var errNotText = errors.New("not UTF-8 text")

// taskText is the one rule for a task's text (init's --instructions, the
// INSTRUCTIONS.md and the prompt file a run reads): UTF-8, no other
// encoding, which the agent would be given garbled.
func taskText(data []byte) error {
	if !utf8.Valid(data) {
		return errNotText
	}
	return nil
}
