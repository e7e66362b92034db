package main

// This file decides whether the user's config file can be read at all. The
// rules are: no HOME (and no XDG_CONFIG_HOME) means no user config; a user
// config directory that cannot be read (HOME is a file, a component is not a
// directory, a loop of links) is absent too, with a warning, never a fatal
// error for every command; a config file that can be reached is read (and
// judged) as ever.

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// userConfigFile returns the user's config file to read, or "" when there
// is none or it cannot be reached (warnUserConfig says why).
func userConfigFile() string {
	p := userConfigPath()
	if userConfigUnreachable(p) != nil {
		return ""
	}
	return p
}

// userConfigUnreachable returns why the user's config file at p cannot be
// reached, or nil (a missing file is no error: there is no user config).
func userConfigUnreachable(p string) error {
	if p == "" {
		return nil
	}
	if _, err := os.Stat(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return unwrapPathError(err)
	}
	return nil
}

// warnUserConfig warns, once per command, that the user's config cannot be
// reached.
func warnUserConfig(stderr io.Writer) {
	p := userConfigPath()
	if err := userConfigUnreachable(p); err != nil {
		fmt.Fprintf(stderr, "%s: warning: ignoring the user config %s: %v\n", progName, p, err)
	}
}
