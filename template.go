package main

// This file implements templates: a workspace's task kept to start others
// from ('init --template NAME'). The rules are: a template is a directory
// NAME/ holding INSTRUCTIONS.md and template.json (the mode, the
// workspace's config, where it came from and when); project templates live
// in claude-iterate/templates in the project root, --global ones in the
// user's config directory (~/.config/claude-iterate/templates); a name is
// looked up in the project first; names are workspace names; every file
// is read through the safe reader; a project template never holds a
// secret (a notify URL's password or token: left out, as .workspace.json
// leaves it out), and a template whose config holds one (a --global one,
// or one saved before) is written 0600.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Template files and directories.
const (
	templatesDirName = "claude-iterate/templates"
	templateMetaFile = "template.json"
)

// savedTemplate is one template.
type savedTemplate struct {
	Name   string         `json:"-"`
	Dir    string         `json:"-"`
	Global bool           `json:"-"`
	Mode   string         `json:"mode"`
	Config map[string]any `json:"config,omitempty"`
	From   string         `json:"from,omitempty"` // the workspace it was saved from
	Saved  time.Time      `json:"saved"`

	instructions string
}

// templateDirs returns the project's and the user's template directories.
func templateDirs(env *cliEnv) (project, global string) {
	project = filepath.Join(env.projectRoot, templatesDirName)
	if p := userConfigPath(); p != "" {
		global = filepath.Join(filepath.Dir(p), "templates")
	}
	return project, global
}

// templatesDirFault refuses the project's templates directory when it is
// a symbolic link (dangling or not) or no directory: as the archive
// directory, it is used only as a real directory, never written or read
// through a link (an agent's). The user's is left to the user: dotfile
// managers link their config directories.
func templatesDirFault(env *cliEnv) error {
	dir, _ := templateDirs(env)
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil
	}
	shown := relPath(env.projectRoot, dir)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(dir)
		return withHint(fmt.Errorf("the templates directory %s is a symbolic link (to %s): templates are written and read only in a real directory", shown, clip(stripControls(target), 200)),
			"rm %s removes the link (what it leads to stays); the next template save makes the directory", shellQuote(shown))
	case !fi.IsDir():
		return withHint(fmt.Errorf("the templates directory %s is not a directory", shown), "move it out of the way: mv %s %s", shellQuote(shown), shellQuote(shown+".moved"))
	}
	return nil
}

// write writes the template's files, replacing its directory's.
func (t *savedTemplate) write() error {
	perm := os.FileMode(0o644)
	if t.Config != nil && holdsSecret(t.Config) {
		perm = 0o600
	}
	if b, _ := configBase(); t.Global && b.usable() != nil {
		return b.usable() // never a HOME made (tryout 7)
	}
	if err := makeDirAll(t.Dir, 0o755); err != nil {
		return err
	}
	meta, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := checkWritable(filepath.Join(t.Dir, instructionsFile), filepath.Join(t.Dir, templateMetaFile)); err != nil {
		return fmt.Errorf("%w; nothing was changed", err)
	}
	if err := writeFileAtomic(filepath.Join(t.Dir, instructionsFile), []byte(t.instructions), perm); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(t.Dir, templateMetaFile), append(meta, '\n'), perm)
}

// findTemplate loads template name: from the project, else the user's
// (only the user's with global).
func findTemplate(env *cliEnv, name string, global bool) (*savedTemplate, error) {
	if err := checkName(name); err != nil {
		return nil, usagef("invalid template name %q", name)
	}
	project, user := templateDirs(env)
	var dirs []string
	if !global {
		if err := templatesDirFault(env); err != nil {
			return nil, err
		}
		dirs = append(dirs, project)
	}
	if user != "" {
		dirs = append(dirs, user)
	}
	for _, d := range dirs {
		t, err := loadTemplate(filepath.Join(d, name), d == user)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		return t, err
	}
	return nil, withHint(fmt.Errorf("no template %q", name), "list them with: claude-iterate template list")
}

// loadTemplate reads the template in dir.
func loadTemplate(dir string, global bool) (*savedTemplate, error) {
	data, err := readRegularFile(filepath.Join(dir, templateMetaFile), maxHeadFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, templateMetaFile), unwrapPathError(err))
	}
	t := &savedTemplate{Name: filepath.Base(dir), Dir: dir, Global: global}
	if err := decodeJSONFile(filepath.Join(dir, templateMetaFile), data, t); err != nil {
		return nil, err
	}
	if !validMode(t.Mode) {
		return nil, fmt.Errorf("%s: mode: want \"loop\" or \"iterative\", got %q", filepath.Join(dir, templateMetaFile), t.Mode)
	}
	if t.Config != nil {
		if err := checkConfigObject(filepath.Join(dir, templateMetaFile), t.Config, map[string]any{}); err != nil {
			return nil, err
		}
	}
	text, err := readRegularFile(filepath.Join(dir, instructionsFile), maxHeadFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, instructionsFile), unwrapPathError(err))
	}
	t.instructions = string(text)
	return t, nil
}

// scope says where the template lives.
func (t *savedTemplate) scope() string {
	if t.Global {
		return "global"
	}
	return "project"
}

// firstLine is the task's first line of text, its heading marks dropped.
func (t *savedTemplate) firstLine() string {
	for _, l := range strings.Split(t.instructions, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(l, "# ")); l != "" {
			return l
		}
	}
	return ""
}

// withoutSecrets is cfg less a notify URL with credentials, and whether
// one was left out: what a project template, which can go into git,
// keeps.
func withoutSecrets(cfg map[string]any) (map[string]any, bool) {
	var out map[string]any
	leftOut := false
	for k, v := range cfg {
		if secretValue(k, v) {
			leftOut = true
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v
	}
	return out, leftOut
}

// redactedConfig is cfg with a notify URL's credentials blotted out.
func redactedConfig(cfg map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range cfg {
		if s, ok := v.(string); ok && lookupConfigKey(k) != nil && lookupConfigKey(k).kind == kindURL {
			v = redactURL(s)
		}
		out[k] = v
	}
	return out
}
