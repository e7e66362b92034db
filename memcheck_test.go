package main

import (
	"errors"
	"fmt"
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
// The command is started by maxrss-probe, a small process, never by the
// test process itself: a child's peak counts the memory of the process it
// was forked (or vforked) from until it exec'd, and the test process, which
// runs many scenarios at once, may hold hundreds of MiB.
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
	probe, path := lookScriptPath(ts, "maxrss-probe"), lookScriptPath(ts, args[1])
	out := ts.MkAbs(".maxrss")
	cmd := exec.Command(probe, append([]string{out, path, args[1]}, args[2:]...)...)
	cmd.Args[0] = "maxrss-probe"
	cmd.Dir = ts.MkAbs(".")
	for _, k := range []string{"PATH", "HOME", "WORK", "TMPDIR", "XDG_CONFIG_HOME", "GORACE"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	if err := cmd.Run(); err != nil {
		ts.Fatalf("maxrss: %s: %v", args[1], err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		ts.Fatalf("maxrss: %v", err)
	}
	mib, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		ts.Fatalf("maxrss: the probe wrote %q", data)
	}
	os.Remove(out)
	ts.Logf("%s: peak resident memory %d MiB (limit %d)", args[1], mib, limit)
	if raceBuild {
		ts.Logf("maxrss: the limit is not checked under -race")
		return
	}
	if mib > int64(limit) {
		ts.Fatalf("%s took %d MiB of memory at its peak; the most is %d", args[1], mib, limit)
	}
}

// lookScriptPath finds name in the script's PATH.
func lookScriptPath(ts *testscript.TestScript, name string) string {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return filepath.Join(dir, name)
		}
	}
	ts.Fatalf("maxrss: %s not found in $PATH", name)
	return ""
}

// maxrssProbeMain is the maxrss-probe command: "maxrss-probe OUT PATH
// ARGV0 [ARGS...]" runs PATH (named ARGV0) with the probe's standard
// streams, writes its peak resident memory in MiB to OUT, and exits with
// its exit status.
func maxrssProbeMain() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: maxrss-probe OUT PATH ARGV0 [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[4:]...)
	cmd.Args[0] = os.Args[3]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "maxrss-probe:", err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "maxrss-probe: no resource usage on this system")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte(strconv.FormatInt(rssMiB(ru), 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "maxrss-probe:", err)
		os.Exit(2)
	}
	os.Exit(cmd.ProcessState.ExitCode())
}
