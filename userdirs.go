package main

// This file decides where the user's own directories of the tool go: the
// state ($XDG_STATE_HOME/claude-iterate, by default
// ~/.local/state/claude-iterate: the registry of runs, serve's token) and
// the config ($XDG_CONFIG_HOME/claude-iterate, by default
// ~/.config/claude-iterate: the user config, the global templates). The
// rules are:
//   - A HOME that does not exist is never made (cron and systemd jobs have
//     HOME=/nonexistent), nor the directory an XDG variable names is in:
//     the tool makes its own directories under them, not the user's.
//   - A variable that names no directory (a regular file: a typo such as
//     XDG_STATE_HOME=~/.profile, or a HOME that is a file) is told to be
//     fixed; the only thing ever offered for rm is in the tool's own
//     directory, never what the variable names or anything above.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// userBase is a base directory of the user's: dir, from the variable env
// (XDG_STATE_HOME, XDG_CONFIG_HOME or HOME), whose value is val; xdg is
// the XDG variable that would override HOME.
type userBase struct {
	env, val, dir, xdg string
}

// stateBase is the base of the tool's state directory; false when HOME and
// XDG_STATE_HOME are unset. A relative XDG_STATE_HOME is ignored.
func stateBase() (userBase, bool) {
	if v := os.Getenv("XDG_STATE_HOME"); v != "" && filepath.IsAbs(v) {
		return userBase{env: "XDG_STATE_HOME", val: v, dir: v, xdg: "XDG_STATE_HOME"}, true
	}
	return homeBase("XDG_STATE_HOME", ".local", "state")
}

// configBase is the base of the user's config directory; false when HOME
// and XDG_CONFIG_HOME are unset. A relative XDG_CONFIG_HOME is ignored, as
// the XDG spec asks (and as XDG_STATE_HOME is).
func configBase() (userBase, bool) {
	if v := os.Getenv("XDG_CONFIG_HOME"); v != "" && filepath.IsAbs(v) {
		return userBase{env: "XDG_CONFIG_HOME", val: v, dir: v, xdg: "XDG_CONFIG_HOME"}, true
	}
	return homeBase("XDG_CONFIG_HOME", ".config")
}

// homeBase is the base under HOME at the path elem, when the XDG variable
// xdg is unset.
func homeBase(xdg string, elem ...string) (userBase, bool) {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return userBase{}, false
	}
	return userBase{env: "HOME", val: home, dir: filepath.Join(append([]string{home}, elem...)...), xdg: xdg}, true
}

// own is the tool's own directory in the base.
func (b userBase) own() string { return filepath.Join(b.dir, progName) }

// usable returns why the tool's directories cannot be made in the base,
// or nil: HOME missing or no directory; the XDG variable's directory no
// directory, or missing in a directory that is missing too.
func (b userBase) usable() error {
	fi, err := os.Stat(b.val)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		hint := "point " + b.env + " at a directory"
		if b.env == "HOME" {
			hint += ", or set " + b.xdg + " to one"
		}
		return withHint(fmt.Errorf("%s names %s (%s), not a directory", b.env, fileKind(fi), b.val), "%s", hint)
	case b.env == "HOME" && errors.Is(err, os.ErrNotExist):
		return withHint(fmt.Errorf("HOME (%s) does not exist", b.val), "point HOME at a directory, or set %s to one", b.xdg)
	case errors.Is(err, os.ErrNotExist):
		if pfi, perr := os.Stat(filepath.Dir(b.val)); perr == nil && pfi.IsDir() {
			return nil // the tool makes the directory the variable names
		}
		return withHint(fmt.Errorf("%s (%s) is in a directory that does not exist", b.env, b.val), "point %s at a directory", b.env)
	}
	return withHint(fmt.Errorf("%s (%s): %v", b.env, b.val, unwrapPathError(err)), "point %s at a directory", b.env)
}

// notOwnHint says what to do with p, no directory on the way to the base
// b's own directory and not in it: the user's, never offered for rm. When
// p is what the variable names, or above it, the variable is to be fixed.
func notOwnHint(b userBase, p string) string {
	kind := "no directory"
	if fi, err := os.Lstat(p); err == nil {
		kind = fileKind(fi)
	}
	if within(p, b.val) {
		fix := "point it at a directory"
		if b.env == "HOME" {
			fix += ", or set " + b.xdg + " to one"
		}
		if filepath.Clean(p) == filepath.Clean(b.val) {
			return fmt.Sprintf("%s names %s: %s", b.env, kind, fix)
		}
		return fmt.Sprintf("%s is under %s (%s): %s", b.env, kind, p, fix)
	}
	return fmt.Sprintf("%s is not claude-iterate's: move it away, or set %s to a directory", p, b.xdg)
}

// prefixErr is err with prefix before its message, its hint kept a hint.
func prefixErr(prefix string, err error) error {
	var he *hintError
	if errors.As(err, &he) {
		return withHint(fmt.Errorf("%s: %w", prefix, he.err), "%s", he.hint)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}
