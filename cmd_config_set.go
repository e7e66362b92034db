package main

// This file implements 'config set' and 'config unset': writing a key to
// one configuration layer. The rules are: keys and values are checked
// exactly as the readers check them (lookupConfigKey, parseConfigValue,
// and the whole file again through parseConfigObject before it is
// written), so a file the tool writes is always one it reads; an unknown
// key is a usage error with a did-you-mean; VALUE is JSON where it parses
// as JSON, else a string; a file that is already broken is never
// rewritten (the user fixes it by hand, where the error points); the
// project layer is the default, and never given a notify URL with
// credentials (it goes into git; --user and --workspace keep them out);
// files are written atomically, and 0600 when they hold such a URL; a
// workspace's config is never changed under a run (its end would write
// the metadata back); and
// each set holds its layer for the whole read-modify-write (configTarget.
// lock), so that two at once both land.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// configSetUsage is the part of the config manual about set and unset.
const configSetUsage = `Setting keys:
  claude-iterate config set KEY VALUE [--user|--project|--workspace WS]
  claude-iterate config set KEY VALUE --add|--remove   (array keys)
  claude-iterate config unset KEY [--user|--project|--workspace WS]

  set writes KEY to one layer: --project (the default, .claude-iterate.json
  in the project root), --user, or --workspace WS (its .workspace.json,
  which goes with its task in git; a notify URL with credentials goes to
  its .metadata.json instead, out of git). The project config can go into
  git too: a notify URL with credentials is refused there (use --user).
  VALUE is JSON where it parses as JSON (5, true, ["a","b"], {"…":…}),
  else a string. --add and --remove add one element to an array key or
  remove it, starting from the key's effective value. Keys and values are
  checked as the readers check them. unset removes KEY from the layer.

  claude-iterate config set claude.args '["--permission-mode","acceptEdits"]'
  claude-iterate config set claude.args --add -- --verbose
  claude-iterate config set defaultDelay 5 --user
  claude-iterate config set notifyEvents '["completion","error"]'
  claude-iterate config unset defaultDelay
`

// configTarget is the layer a set or unset writes.
type configTarget struct {
	layer string // layerProject, layerUser or layerWorkspace
	path  string // the file (the workspace's .workspace.json)
	shown string // the file as shown
	ws    *workspace
	// below are the layers under it, for --add and --remove.
	below []*configLayer
}

// runConfigSet runs 'config set' (unset false) or 'config unset'.
func runConfigSet(env *cliEnv, args []string, unset bool) error {
	verb := "set"
	if unset {
		verb = "unset"
	}
	fs := newFlagSet("config " + verb)
	user := fs.Bool("user", false, "")
	project := fs.Bool("project", false, "")
	var wsArg stringFlag
	fs.Var(&wsArg, "workspace", "")
	var add, remove bool
	if !unset {
		fs.BoolVar(&add, "add", false, "")
		fs.BoolVar(&remove, "remove", false, "")
	}
	want := 2
	if unset {
		want = 1
	}
	pos, err := parseFlags(fs, args, want)
	if ue := (*usageError)(nil); errors.As(err, &ue) && strings.HasPrefix(ue.msg, "unknown flag") && !unset {
		return usagef("%s (a VALUE that starts with '-' goes after '--': config set KEY -- VALUE)", ue.msg)
	}
	if err != nil {
		return err
	}
	if len(pos) < want {
		if unset {
			return usagef("missing key: claude-iterate config unset KEY")
		}
		if len(pos) == 0 {
			return usagef("missing key and value: claude-iterate config set KEY VALUE")
		}
		return usagef("missing value for %s: claude-iterate config set %s VALUE", pos[0], pos[0])
	}
	n := 0
	for _, b := range []bool{*user, *project, wsArg.set} {
		if b {
			n++
		}
	}
	if n > 1 {
		return usagef("--user, --project and --workspace contradict each other: give one")
	}
	if add && remove {
		return usagef("--add and --remove contradict each other")
	}
	key, err := configKeyOf(pos[0])
	if err != nil {
		return err
	}
	if (add || remove) && key.kind != kindStringList && key.kind != kindEventList {
		return usagef("--add and --remove work on array keys; %s is not one", key.name)
	}
	t, err := configTargetOf(env, *user, wsArg)
	if err != nil {
		return err
	}
	if unset {
		found := false
		err := t.update(wsArg.s, false, func(obj map[string]any) (bool, error) {
			found = removeConfigKey(obj, key.name)
			if found {
				if err := t.checkAgents(obj, key.name, "cannot unset "+key.name); err != nil {
					return false, err
				}
			}
			return found, nil
		})
		switch {
		case err != nil:
			return err
		case !found:
			fmt.Fprintf(env.stdout, "%s was not set in the %s config (%s)\n", key.name, t.layer, t.shown)
		default:
			fmt.Fprintf(env.stdout, "Unset %s in the %s config (%s)\n", key.name, t.layer, t.shown)
		}
		return nil
	}
	arg, err := configArgValue(key, pos[1], add || remove)
	if err != nil {
		return err
	}
	if t.layer == layerProject && secretValue(key.name, arg) {
		// The project file goes into git, as a workspace's .workspace.json
		// does: the credentials stay out of it.
		return &inputError{withHint(fmt.Errorf("not writing %s = %s to the project config (%s): the URL holds credentials, and the project config can go into git", key.name, redactURL(arg.(string)), t.shown),
			"keep it in the user config: claude-iterate config set %s URL --user (or in a workspace's, out of git: --workspace <workspace>)", key.name)}
	}
	var val any
	err = t.update(wsArg.s, true, func(obj map[string]any) (bool, error) {
		val = arg
		if add || remove {
			var err error
			if val, err = editConfigList(t, obj, key, arg.([]any)[0].(string), add); err != nil {
				return false, err
			}
		}
		removeConfigKey(obj, key.name)
		obj[key.name] = val
		if err := t.checkAgents(obj, key.name, fmt.Sprintf("invalid value %q for %s", pos[1], key.name)); err != nil {
			return false, err
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	b, _ := json.Marshal(val)
	shown := string(b)
	if key.kind == kindURL {
		shown = redactURL(val.(string))
	}
	where := t.shown
	if t.ws != nil && secretValue(key.name, val) {
		where = relPath(env.projectRoot, t.ws.metadataPath()) + ": it holds credentials, kept out of git"
	}
	fmt.Fprintf(env.stdout, "Set %s = %s in the %s config (%s)\n", key.name, shown, t.layer, where)
	return nil
}

// configArgValue turns the command line's VALUE into the JSON value of key
// (one element of it, as a one-element array, when element is set),
// checked as the readers check it.
func configArgValue(key *configKey, arg string, element bool) (any, error) {
	data := []byte(arg)
	if !json.Valid(data) {
		data, _ = json.Marshal(arg)
		if example := commaListKeys[key.name]; example != "" && !element {
			// The form the flag takes: "Bash,Write".
			tools := splitToolList(arg)
			if len(tools) == 0 {
				return nil, badValue("invalid value %q for %s: want names separated by commas, e.g. %s", arg, key.name, example)
			}
			data, _ = json.Marshal(tools)
		}
	}
	if element {
		data = append(append([]byte("["), data...), ']')
	}
	doc, err := parseJSONDoc("VALUE", data)
	if err != nil {
		return nil, badValue("invalid value %q for %s: %v", arg, key.name, err)
	}
	if _, err := parseConfigValue(doc, key, doc.Root); err != nil {
		var fe *fileError
		if errors.As(err, &fe) {
			err = errors.New(fe.Msg)
		}
		return nil, badValue("invalid value %q for %s: %v", arg, key.name, err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, badValue("invalid value %q for %s: %v", arg, key.name, err)
	}
	return v, nil
}

// commaListKeys are the array keys whose VALUE may also be given as the
// flag that sets them takes it, names separated by commas (with an
// example); other arrays (claude.args) may hold commas in an element.
var commaListKeys = map[string]string{
	"claude.allowedTools": "Edit,Write,Bash",
	"notifyEvents":        "completion,error",
	"fallbackAgents":      "codex,claude",
}

// editConfigList adds elem to key's array, or removes it, starting from
// the layer's value, else the effective value of the layers below it.
func editConfigList(t *configTarget, obj map[string]any, key *configKey, elem string, add bool) ([]any, error) {
	var cur []string
	l := &configLayer{values: map[string]any{}}
	if err := checkConfigObject(t.path, obj, l.values); err != nil {
		return nil, err
	}
	if v, ok := l.values[key.name]; ok {
		cur = v.([]string)
	} else {
		cur = resolveSettings(t.below...).values[key.name].([]string)
	}
	var out []any
	found := false
	for _, s := range cur {
		if s == elem {
			found = true
			if !add {
				continue
			}
		}
		out = append(out, s)
	}
	switch {
	case add && found:
		return nil, fmt.Errorf("%s already holds %q", key.name, elem)
	case add && key.kind == kindEventList && slices.Contains(cur, "all"):
		return nil, fmt.Errorf("%s holds %q, every event: adding %q changes nothing", key.name, "all", elem)
	case add:
		out = append(out, elem)
	case !found:
		return nil, fmt.Errorf("%s does not hold %q", key.name, elem)
	}
	if out == nil {
		out = []any{}
	}
	return out, nil
}

// checkAgents refuses a change to key that leaves the layer (obj), over
// the layers below it, with agent settings no run could use
// (agentSettingsFaults), the refusal starting with what: a usage fault
// (exit 2) naming the key, with the unset command of the other key at
// fault when a lower layer set it.
func (t *configTarget) checkAgents(obj map[string]any, key, what string) error {
	if !slices.Contains(agentFaultKeys, key) {
		return nil
	}
	l := &configLayer{name: t.layer, path: t.path, values: map[string]any{}}
	if err := checkConfigObject(t.path, obj, l.values); err != nil {
		return err
	}
	cfg := resolveSettings(append([]*configLayer{l}, t.below...)...)
	for _, f := range agentSettingsFaults(cfg) {
		if f.key != key && key != "agent" && key != "fallbackAgents" {
			continue // a fault of another key, not this change's
		}
		err := fmt.Errorf("%s: %s", what, f.msg)
		if layer := cfg.sources[f.key]; f.key != key && layer != t.layer && layer != layerDefault {
			ws := ""
			if t.ws != nil {
				ws = t.ws.Name
			}
			err = withHint(err, "%s is set in the %s config (%s): %s", f.key, layer, layerPath(cfg, layer, ""), configUnsetCommand(f.key, layer, ws))
		}
		return &inputError{err}
	}
	return nil
}

// configTargetOf is the layer the flags name. A broken config file is
// reported by read when it is the target; one below the target (the
// user's under the project's, both under a workspace's) is left out with
// a warning, as every command that does not need it does.
func configTargetOf(env *cliEnv, user bool, wsArg stringFlag) (*configTarget, error) {
	projectLayer, userLayer, broken := baseLayersLenient(env.projectRoot)
	projectPath := filepath.Join(env.projectRoot, projectConfigName)
	for _, b := range broken {
		if !user && (wsArg.set || b.name == layerUser) {
			warnConfig(env, b.err)
		}
	}
	switch {
	case user:
		p := userConfigPath()
		if p == "" {
			return nil, errors.New("no user config directory: $HOME and $XDG_CONFIG_HOME are unset")
		}
		return &configTarget{layer: layerUser, path: p, shown: p}, nil
	case wsArg.set:
		w, err := openWorkspace(env, resolveSettings(envLayer(), projectLayer, userLayer).WorkspacesDir, wsArg.s)
		if err != nil {
			return nil, err
		}
		if err := brokenTarget(w); err != nil {
			return nil, err
		}
		return &configTarget{layer: layerWorkspace, path: settingsPath(w), shown: relPath(env.projectRoot, settingsPath(w)), ws: w,
			below: []*configLayer{projectLayer, userLayer}}, nil
	}
	return &configTarget{layer: layerProject, path: projectPath, shown: relPath(env.projectRoot, projectPath), below: []*configLayer{userLayer}}, nil
}

// update reads the layer, changes it (change reports whether it did) and
// writes it back, holding it for the whole read-modify-write, so that two
// at once both land: a workspace's config through the workspace's claim
// (which reloads its metadata, and which no run may hold; wsArg names it
// as given), a config file through its update lock (writelock.go). A file
// that is missing is made without a lock, never over one made meanwhile:
// then the update is made again, on that file, under its lock. making
// says that the file will be written: the user config's directory is made
// first.
func (t *configTarget) update(wsArg string, making bool, change func(obj map[string]any) (bool, error)) error {
	for {
		release, missing, err := t.lock(making, wsArg)
		if err != nil {
			return err
		}
		obj, err := t.read()
		if err == nil {
			var changed bool
			if changed, err = change(obj); err == nil && changed {
				err = t.write(obj, missing)
			}
		}
		release()
		if !(missing && errors.Is(err, fs.ErrExist)) {
			return err
		}
	}
}

// makeDir makes the directory of the layer's file; the user's only in a
// HOME, or XDG_CONFIG_HOME's directory, that is there (userdirs.go).
func (t *configTarget) makeDir() error {
	if b, _ := configBase(); t.layer == layerUser && b.usable() != nil {
		return prefixErr("writing "+t.shown, b.usable())
	}
	if err := makeDirAll(filepath.Dir(t.path), 0o700); err != nil {
		return fmt.Errorf("writing %s: %w", t.shown, err)
	}
	return nil
}

// lock holds the layer for update; missing says that its file is not
// there, and is not locked.
func (t *configTarget) lock(making bool, wsArg string) (release func(), missing bool, err error) {
	if t.ws != nil {
		release, err = claimWorkspace(t.ws, wsArg, "configure")
		return release, false, err
	}
	if making {
		if err := t.makeDir(); err != nil {
			return nil, false, err
		}
	}
	unlock, missing, err := lockForUpdate(t.path)
	if err != nil {
		return nil, false, t.linkHint(lockedUpdateError(t.shown, err))
	}
	return unlock, missing, nil
}

// linkHint adds to err, when the layer's file is a symbolic link (a
// dotfile manager's), how to go on (linkFixHint).
func (t *configTarget) linkHint(err error) error { return linkFixHint(err, t.path, t.shown) }

// linkFixHint adds to err, when the file at path (shown as shown) is a
// symbolic link, how to go on: the one writer never writes through a
// link, so a regular file it leads to (within the config cap) is edited by
// hand, or the link replaced by a copy; a link that leads to no file, or
// to anything else (a device, whose copy would fill the disk; a directory,
// which cp refuses), is removed. The same for every layer.
func linkFixHint(err error, path, shown string) error {
	target, lerr := os.Readlink(path)
	if lerr != nil {
		return err
	}
	if !filepath.IsAbs(target) { // relative to the link's directory
		target = filepath.Join(filepath.Dir(path), target)
	}
	fi, serr := os.Stat(path)
	switch {
	case serr != nil: // dangling (or a loop): nothing to edit or copy
		return withHint(err, "config set never writes through a symbolic link, and this one leads to no file: %s removes it, then set again",
			removeCommand(path, shown))
	case !fi.Mode().IsRegular():
		return withHint(err, "config set never writes through a symbolic link, and this one leads to %s, %s, not a regular file: %s removes the link (not %s), then set again",
			target, fileKind(fi), removeCommand(path, shown), target)
	case fi.Size() > configCap:
		return withHint(err, "config set never writes through a symbolic link, and this one leads to %s, larger than %s: %s removes the link (not %s), then set again",
			target, sizeText(configCap), removeCommand(path, shown), target)
	}
	copied := shellQuote(shown + ".copy")
	return withHint(err, "config set never writes through a symbolic link: edit %s itself, or replace the link by a copy of it (cp %s %s && mv %s %s), then set again",
		target, shellQuote(target), copied, copied, shellQuote(shown))
}

// read returns the layer's keys as a JSON object, refusing a file that
// the readers refuse.
func (t *configTarget) read() (map[string]any, error) {
	if t.ws != nil {
		if err := brokenTarget(t.ws); err != nil { // broken since
			return nil, err
		}
		if t.ws.meta.Config == nil {
			return map[string]any{}, nil
		}
		return t.ws.meta.Config, nil
	}
	if _, err := loadFileLayer(t.layer, t.path); err != nil {
		return nil, withHint(err, "fix %s by hand first: config set never rewrites a file it cannot read", t.shown)
	}
	data, err := readRegularFile(t.path, metadataCap)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", t.shown, unwrapPathError(err))
	}
	obj := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("reading %s: %w", t.shown, err)
	}
	return obj, nil
}

// write checks obj as the readers would, then writes it to the layer: a
// new file (create) only where none is, else fs.ErrExist.
func (t *configTarget) write(obj map[string]any, create bool) error {
	if err := checkConfigObject(t.path, obj, map[string]any{}); err != nil {
		return err
	}
	if t.ws != nil {
		if err := checkWritable(settingsPath(t.ws), t.ws.metadataPath()); err != nil {
			err = fmt.Errorf("%w; nothing was changed", err)
			for _, p := range []string{settingsPath(t.ws), t.ws.metadataPath()} {
				if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
					return linkFixHint(err, p, filepath.Join(filepath.Dir(t.shown), filepath.Base(p)))
				}
			}
			return err
		}
		t.ws.meta.Config = obj
		if len(obj) == 0 {
			t.ws.meta.Config = nil
		}
		if err := writeSettings(t.ws); err != nil {
			return err
		}
		return t.ws.save()
	}
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(t.path); err == nil {
		perm = fi.Mode().Perm()
	}
	if holdsSecret(obj) {
		perm = 0o600
	}
	if err := t.makeDir(); err != nil {
		return err
	}
	write := writeFileAtomic
	if create {
		write = createFileAtomic
	}
	if err := write(t.path, append(data, '\n'), perm); err != nil {
		return t.linkHint(fmt.Errorf("writing %s: %w", t.shown, unwrapPathError(err)))
	}
	return nil
}

// checkConfigObject checks obj as a config file's content, as the readers
// do, storing the values in out.
func checkConfigObject(path string, obj map[string]any, out map[string]any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	doc, err := parseJSONDoc(path, data)
	if err != nil {
		return err
	}
	return parseConfigObject(doc, doc.Root, "", out)
}

// removeConfigKey removes name from obj, spelt dotted or nested (or half
// and half), dropping objects it leaves empty; it reports whether it was
// there.
func removeConfigKey(obj map[string]any, name string) bool {
	found := false
	if _, ok := obj[name]; ok {
		delete(obj, name)
		found = true
	}
	for i := 0; i < len(name); i++ {
		if name[i] != '.' {
			continue
		}
		sub, ok := obj[name[:i]].(map[string]any)
		if !ok {
			continue
		}
		if removeConfigKey(sub, name[i+1:]) {
			found = true
		}
		if len(sub) == 0 {
			delete(obj, name[:i])
		}
	}
	return found
}

// holdsSecret reports whether a config object holds a notify URL with
// credentials.
func holdsSecret(obj map[string]any) bool {
	l := map[string]any{}
	if checkConfigObject("", obj, l) != nil {
		return true // be safe
	}
	s, _ := l["notifyUrl"].(string)
	return urlHoldsSecret(s)
}

// configKeyOf is the config key name names; an unknown one is an error
// naming the closest key.
func configKeyOf(name string) (*configKey, error) {
	if key := lookupConfigKey(name); key != nil {
		return key, nil
	}
	msg := fmt.Sprintf("unknown key %q", name)
	if s := suggestKey(name); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return nil, &inputError{fmt.Errorf("%s; 'claude-iterate help config' lists the keys", msg)}
}

// badValue is a value a key does not take: reported in one line, exit 2,
// without the command's usage (the command line was well formed).
func badValue(format string, args ...any) error {
	return &inputError{fmt.Errorf(format, args...)}
}

// brokenTarget refuses to set a key in w's settings file when it cannot
// be read: written from .metadata.json's copies, the user's file would be
// lost.
func brokenTarget(w *workspace) error {
	err := w.meta.settingsErr
	if err == nil {
		return nil
	}
	var he *hintError
	if errors.As(err, &he) {
		return err // what is there in its place is removed
	}
	return withHint(err, "fix %s by hand first: config set never rewrites a file it cannot read", settingsPath(w))
}
