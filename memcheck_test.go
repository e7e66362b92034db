package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdMaxRSS runs a command of the script's PATH, in its directory, with its
// output as the command's, and fails if the command's peak resident memory
// passed a limit, in MiB: a coarse check of what a command holds, not a
// timing. Under -race the limit is not checked (the command still runs):
// the detector's shadow memory grows with every allocation ever made, not
// with what is live.
//
//	maxrss MIB command [args...]
func cmdMaxRSS(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: maxrss MIB command [args...]")
	}
	limit, err := strconv.Atoi(args[0])
	if err != nil || limit <= 0 {
		ts.Fatalf("maxrss: bad limit %q", args[0])
	}
	path := ""
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(dir, args[1])); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			path = filepath.Join(dir, args[1])
			break
		}
	}
	if path == "" {
		ts.Fatalf("maxrss: %s not found in $PATH", args[1])
	}
	cmd := exec.Command(path, args[2:]...)
	cmd.Args[0] = args[1]
	cmd.Dir = ts.MkAbs(".")
	for _, k := range []string{"PATH", "HOME", "WORK", "TMPDIR", "XDG_CONFIG_HOME", "GORACE"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	if err := cmd.Run(); err != nil {
		ts.Fatalf("maxrss: %s: %v", args[1], err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		ts.Fatalf("maxrss: no resource usage on this system")
	}
	mib := rssMiB(ru)
	ts.Logf("%s: peak resident memory %d MiB (limit %d)", args[1], mib, limit)
	if raceBuild {
		ts.Logf("maxrss: the limit is not checked under -race")
		return
	}
	if mib > int64(limit) {
		ts.Fatalf("%s took %d MiB of memory at its peak; the most is %d", args[1], mib, limit)
	}
}
