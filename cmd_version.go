package main

// This file implements the version command: the program's version, as
// release builds set it, or the module version go install recorded.

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionUsage is the manual of the version command.
const versionUsage = `Usage: claude-iterate version

Prints the program's version, Go version and platform.

Exit status: 0.
`

func runVersion(env *cliEnv, args []string) error {
	fs := newFlagSet("version")
	if _, err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	_, err := fmt.Fprintf(env.stdout, "claude-iterate %s (%s %s/%s)\n", programVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return writeError(err)
}

// programVersion is the version set at link time, else the module version
// that go install recorded in the build info, else "devel".
func programVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(version, bi)
}

// versionFrom picks the version: linked, else from the build info, else
// "devel".
func versionFrom(linked string, bi *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
