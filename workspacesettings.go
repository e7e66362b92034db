package main

// This file keeps a workspace's settings where git keeps its task, and takes
// up a workspace that came without its runtime files. The rules are:
//
//   - The user's choices for a workspace, its mode and its config layer,
//     live in settingsFile (.workspace.json) beside INSTRUCTIONS.md: a task
//     file, committable, never named in the tool's .gitignore. init and
//     setup write it, 'config set|unset --workspace' rewrite it, and the
//     first save of a workspace made before it existed writes it from
//     .metadata.json's copies.
//   - It wins over those copies, which stay in .metadata.json (written at
//     every save) as the fallback when it is missing, or broken (a typo, a
//     FIFO, a directory, too large: metadata.settingsErr). A broken one is
//     never rewritten; the commands that need it (run, verify, setup, edit,
//     template save, config set|unset --workspace) refuse it with a hint
//     (settingsFault); config leaves it out and marks it, as a broken
//     project config; every other command warns once (warnSettings) and
//     goes on with the copies. A workspace with neither file readable has
//     no mode: every command says so (freshSettingsFault).
//   - A notify URL with credentials never goes into it: it stays in
//     .metadata.json (0600, out of git), and a clone goes without it.
//   - A workspace directory holding its task files (INSTRUCTIONS.md or
//     .workspace.json) but no .metadata.json, as a fresh clone or a git
//     clean -xfd leaves it, is a workspace (hasTaskFiles: listed, opened,
//     suggested for a typo), never an error. A command that changes it
//     (run, verify, config set|unset, setup, edit, reset, archive, clean,
//     answer, stop) takes it up: fresh metadata from its settings,
//     written with the .gitignore, said in one line on stderr. One that
//     only looks at it (list, status, history, logs, config, watch,
//     template save) loads the same metadata in memory only, writes
//     nothing, says nothing on stderr, and shows it as "not run here yet"
//     (w.notHere); a dry run too, saying that a run takes it up. A
//     ralph-mode run's state has no settings file: it is loop mode,
//     configured by the project.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// settingsFile is the file of a workspace's settings.
const settingsFile = ".workspace.json"

// settingsPerm is its permissions: it holds no secret.
const settingsPerm = 0o644

// workspaceSettings is .workspace.json.
type workspaceSettings struct {
	Mode   string         `json:"mode"`
	Config map[string]any `json:"config,omitempty"`
}

// settingsPath is the path of w's settings file.
func settingsPath(w *workspace) string { return filepath.Join(w.StateDir, settingsFile) }

// readSettings reads and checks w's settings file; a missing one is an
// error satisfying errors.Is(err, os.ErrNotExist).
func readSettings(w *workspace) (*workspaceSettings, error) {
	path := settingsPath(w)
	data, err := readRegularFile(path, configCap)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		err = fmt.Errorf("reading %s: %w", path, unwrapPathError(err))
		if hint := fileFaultHint(path, path, err); hint != "" {
			return nil, withHint(err, "%s; without it the workspace's mode and config are those of .metadata.json", hint)
		}
		return nil, err
	}
	return parseSettings(path, data)
}

// parseSettings parses and checks a settings file, read from path.
func parseSettings(path string, data []byte) (*workspaceSettings, error) {
	doc, err := parseJSONObject(path, data)
	if err != nil {
		return nil, err
	}
	s := &workspaceSettings{}
	for _, k := range doc.Root.Keys {
		v := doc.Root.Obj[k]
		switch k {
		case "mode":
			if v.Kind != jsonString || !validMode(v.Str) {
				return nil, doc.errorAt(v, k, "want \"loop\" or \"iterative\", got %s", describeNode(v))
			}
			s.Mode = v.Str
		case "config":
			if v.Kind != jsonObject {
				return nil, doc.errorAt(v, k, "want an object, got %s", v.Kind)
			}
			if err := parseConfigObject(doc, v, "", map[string]any{}); err != nil {
				var fe *fileError
				if errors.As(err, &fe) && fe.Key != "" {
					fe.Key = "config." + fe.Key
				}
				return nil, err
			}
		default:
			return nil, doc.errorAt(v, k, "unknown key %q (want \"mode\" and \"config\")", k)
		}
	}
	if s.Mode == "" {
		return nil, doc.errorAt(doc.Root, "", "no \"mode\" (want \"loop\" or \"iterative\")")
	}
	// The config's values as JSON has them, for writing back: numbers
	// stay as they were written.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return s, nil
}

// applySettings makes s the workspace's mode and config layer, over
// .metadata.json's copies; a notify URL with credentials in those copies
// is kept (it never goes into the settings file).
func (m *metadata) applySettings(s *workspaceSettings, path string) error {
	cfg := map[string]any{}
	for k, v := range s.Config {
		cfg[k] = v
	}
	if v, ok := m.Config["notifyUrl"]; ok && secretValue("notifyUrl", v) {
		cfg["notifyUrl"] = v
	}
	layer := &configLayer{name: layerWorkspace, path: path, values: map[string]any{}}
	if err := checkConfigObject(path, cfg, layer.values); err != nil {
		return err
	}
	m.Mode, m.Config, m.configLayer, m.hasSettings = s.Mode, cfg, layer, true
	if len(cfg) == 0 {
		m.Config = nil
	}
	return nil
}

// secretValue reports whether the value of key holds credentials, which
// stay out of the settings file.
func secretValue(key string, v any) bool {
	return key == "notifyUrl" && holdsSecret(map[string]any{key: v})
}

// writeSettings writes w's mode and config, less its secrets, to its
// settings file.
func writeSettings(w *workspace) error {
	s := workspaceSettings{Mode: w.meta.Mode}
	for k, v := range w.meta.Config {
		if secretValue(k, v) {
			continue
		}
		if s.Config == nil {
			s.Config = map[string]any{}
		}
		s.Config[k] = v
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(settingsPath(w), append(data, '\n'), settingsPerm); err != nil {
		return fmt.Errorf("writing %s: %w", settingsPath(w), unwrapPathError(err))
	}
	w.meta.hasSettings = true
	if w.meta.configLayer != nil {
		w.meta.configLayer.path = settingsPath(w)
	}
	return nil
}

// hasTaskFiles reports whether w's directory holds a workspace's task
// files: INSTRUCTIONS.md or the settings file.
func hasTaskFiles(w *workspace) bool {
	for _, p := range []string{w.instructionsPath(), settingsPath(w)} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// loadWorkspace loads w, taking up a workspace whose task files are there
// but whose .metadata.json is not (a fresh clone): fresh metadata is made,
// written when keep is set and said in one line; without keep (a dry run)
// it is kept in memory, and the line says that a run takes it up. A
// directory without the task files is still an os.ErrNotExist.
func loadWorkspace(env *cliEnv, w *workspace, keep bool) error {
	from, err := loadOrFresh(w)
	if err != nil || !w.notHere {
		return err
	}
	if !keep {
		fmt.Fprintf(env.stderr, "%s: workspace %s has no %s (a fresh clone?): a run takes it up, in %s mode %s\n", progName, w.Name, metadataFile, w.meta.Mode, from)
		return nil
	}
	if err := w.save(); err != nil {
		return fmt.Errorf("taking up workspace %s: %w", w.Name, err)
	}
	w.notHere = false
	if err := ignoreRuntimeFiles(w); err != nil {
		fmt.Fprintf(env.stderr, "%s: warning: %v\n", progName, err)
	}
	fmt.Fprintf(env.stderr, "%s: took up workspace %s from its task files (no %s: a fresh clone?), in %s mode %s\n", progName, w.Name, metadataFile, w.meta.Mode, from)
	return nil
}

// lookWorkspace loads w for a command that only looks at it: a workspace
// without its runtime files gets its fresh metadata in memory only
// (w.notHere), written nowhere and said nowhere.
func lookWorkspace(w *workspace) error {
	_, err := loadOrFresh(w)
	return err
}

// loadOrFresh loads w, or, for a workspace whose task files are there but
// whose .metadata.json is not, makes fresh metadata from its settings in
// memory, sets w.notHere and says where its settings came from.
func loadOrFresh(w *workspace) (from string, err error) {
	err = w.load()
	if !errors.Is(err, os.ErrNotExist) || w.Ralph || !hasTaskFiles(w) {
		return "", err
	}
	w.meta = &metadata{Name: w.Name, Mode: modeLoop, Created: time.Now().UTC().Truncate(time.Second), Status: statusNew}
	from = "(no " + settingsFile + ": the default)"
	switch s, err := readSettings(w); {
	case err == nil:
		if err := w.meta.applySettings(s, settingsPath(w)); err != nil {
			return "", freshSettingsFault(w, err)
		}
		from = "from " + settingsFile
	case !errors.Is(err, os.ErrNotExist):
		return "", freshSettingsFault(w, err)
	}
	if w.meta.configLayer == nil {
		w.meta.configLayer = &configLayer{name: layerWorkspace, path: w.metadataPath(), values: map[string]any{}}
	}
	w.notHere = true
	return from, nil
}

// existingTask explains why init does not make a workspace in a directory
// that holds task files but no metadata: a clone's workspace, which run
// takes up as it is.
func existingTask(w *workspace, arg string) error {
	var here []string
	for _, f := range []string{instructionsFile, settingsFile} {
		if fi, err := os.Lstat(filepath.Join(w.Dir, f)); err == nil && fi.Mode().IsRegular() {
			here = append(here, f)
		}
	}
	return withHint(fmt.Errorf("workspace %s is here already, without its runtime files (a fresh clone?): %s holds %s", w.Name, w.Dir, strings.Join(here, " and ")),
		"run it as it is: claude-iterate run %s (its settings come from %s); or choose another name", shellQuote(arg), settingsFile)
}

// freshSettingsFault is the error of a workspace without .metadata.json (a
// fresh clone) whose settings file cannot be read (err): its mode is
// nowhere else, so no command can go on with it.
func freshSettingsFault(w *workspace, err error) error {
	var he *hintError
	if errors.As(err, &he) {
		err = he.err // its hint speaks of .metadata.json's copies
	}
	path := settingsPath(w)
	err = fmt.Errorf("workspace %s has no %s, and its mode cannot be read: %w", w.Name, metadataFile, err)
	if hint := fileFaultHint(path, path, err); hint != "" {
		return withHint(err, "%s, and write {\"mode\": \"loop\"} (or \"iterative\") in its place", hint)
	}
	return withHint(err, "fix it: it holds the workspace's mode (\"loop\" or \"iterative\") and config")
}

// settingsFault is the error of a command that needs w's settings file
// (run, verify, edit, setup, template save, config) when it cannot be
// read (w.meta.settingsErr), with what to do; nil when it can, or when
// there is none.
func settingsFault(w *workspace) error {
	if w.meta == nil || w.meta.settingsErr == nil {
		return nil
	}
	err := w.meta.settingsErr
	var he *hintError
	if errors.As(err, &he) {
		return err // what is there in its place is removed
	}
	path := settingsPath(w)
	return withHint(err, "fix it, or move it aside to go on with %s's copy of the mode and config: mv %s %s", metadataFile, shellQuote(path), shellQuote(path+".broken"))
}

// warnSettings warns, once, that w's settings file cannot be read and
// that .metadata.json's copies stand in for it, for a command that does
// not need it.
func warnSettings(env *cliEnv, w *workspace) {
	if w.meta == nil || w.meta.settingsErr == nil {
		return
	}
	err := w.meta.settingsErr
	var he *hintError
	if errors.As(err, &he) {
		err = he.err // the commands that need the file give it
	}
	fmt.Fprintf(env.stderr, "%s: warning: %s (ignored here: the mode and config of %s instead)\n", progName, sanitizeString(err.Error()), metadataFile)
}

// needSettings is open for a command that needs the workspace's settings
// file: one that cannot be read is an error (settingsFault).
func needSettings(open func(*cliEnv, string, string) (*workspace, error)) func(*cliEnv, string, string) (*workspace, error) {
	return func(env *cliEnv, dir, arg string) (*workspace, error) {
		w, err := open(env, dir, arg)
		if err == nil {
			err = settingsFault(w)
		}
		if err != nil {
			return nil, err
		}
		return w, nil
	}
}

// openKeep is openWorkspaceKeep with keep set, as an open for needSettings.
func openKeep(keep bool) func(*cliEnv, string, string) (*workspace, error) {
	return func(env *cliEnv, dir, arg string) (*workspace, error) { return openWorkspaceKeep(env, dir, arg, keep) }
}
