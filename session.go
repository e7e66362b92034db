package main

// This file runs the agent CLI attached to the terminal, for setup and edit.
// The rules are: the CLI runs in the foreground, in the tool's own process
// group, with the terminal as its stdin, stdout and stderr, so Ctrl+C and
// Ctrl+Z reach it as they would if the user had started it; the tool only
// waits, as system(3) does — SIGINT and SIGQUIT are caught (never ignored:
// an ignored signal would be inherited by the CLI) and dropped while the CLI
// runs, so a Ctrl+C the CLI handles does not end the tool under it; when the
// CLI stops alone (the real one stops itself with SIGSTOP on Ctrl+Z, not its
// process group) the tool stops too, so the shell sees the job stopped and
// takes the terminal back, and fg resumes both; and when the CLI exits, the
// terminal gets back the mode it had before, whatever the CLI left.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// runAttached runs the program at path with argv in dir, with tty as its
// standard input and out and errOut as its standard output and error, and
// returns how it ended.
func runAttached(tty, out, errOut *os.File, path string, argv []string, dir string, env []string) (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	saved, termErr := getTermios(tty)

	// Caught, not ignored, and only if not ignored already: a signal
	// ignored at start (nohup, a background job of a script) stays ignored
	// for the CLI too, as the shell meant.
	var caught []os.Signal
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGQUIT} {
		if !signal.Ignored(sig) {
			caught = append(caught, sig)
		}
	}
	drop := make(chan os.Signal, 1)
	if len(caught) > 0 {
		signal.Notify(drop, caught...)
		defer signal.Stop(drop)
	}

	var p *os.Process
	err := trackStart(func() (pid int, err error) {
		p, err = os.StartProcess(path, argv, &os.ProcAttr{Dir: dir, Env: env, Files: []*os.File{tty, out, errOut}})
		if err != nil {
			return 0, err
		}
		return p.Pid, nil
	})
	if err != nil {
		return ws, err
	}
	defer forgetChild(p.Pid)
	defer p.Release()
	for {
		ws, _, err = wait4(p.Pid, syscall.WUNTRACED)
		if err != nil {
			return ws, err
		}
		for ws.Stopped() {
			// When a Ctrl+Z stopped the whole group, the tool was stopped
			// too and may see the CLI's stop only once fg has resumed both:
			// the CLI is then running again, and the tool must not stop.
			next, pid, err := wait4(p.Pid, syscall.WNOHANG|syscall.WUNTRACED|syscall.WCONTINUED)
			if err != nil {
				return ws, err
			}
			if pid == 0 {
				// Still stopped, alone: stop the tool, so that the shell's
				// job shows as stopped. SIGTSTP, not SIGSTOP: in an orphaned
				// process group, where no shell could resume the tool, the
				// system discards it.
				syscall.Kill(os.Getpid(), syscall.SIGTSTP)
				break
			}
			ws = next
		}
		if ws.Exited() || ws.Signaled() {
			break
		}
	}
	if termErr == nil {
		restoreTerminal(tty, saved)
	}
	return ws, nil
}

// wait4 waits for the child pid as options say, retrying when a signal
// interrupts the call; pid is 0 when WNOHANG found nothing to report.
func wait4(child, options int) (ws syscall.WaitStatus, pid int, err error) {
	for {
		pid, err = syscall.Wait4(child, &ws, options, nil)
		if !errors.Is(err, syscall.EINTR) {
			return ws, pid, err
		}
	}
}

// restoreTerminal puts back the terminal mode saved before the CLI ran, if
// the CLI left another one and the tool is in the foreground (from the
// background, changing the mode would stop the tool with SIGTTOU).
func restoreTerminal(tty *os.File, saved *syscall.Termios) {
	now, err := getTermios(tty)
	if err != nil || *now == *saved {
		return
	}
	if fg, err := foregroundGroup(tty); err != nil || fg != syscall.Getpgrp() {
		return
	}
	setTermios(tty, saved)
}

// session is the interactive agent (claude, or the config's agent) of
// setup or edit.
type session struct {
	path, name string
	argv       []string
	dir        string
}

// newSession prepares the agent session of setup or edit (kind names its
// system prompt template): the configured agent, command and arguments, the
// system prompt and a first message (its adapter's sessionArgs).
func newSession(env *cliEnv, cfg *settings, w *workspace, kind, instructions, first string) (*session, error) {
	a, err := lookupAgent(cfg.Agent, "agent")
	if err != nil {
		return nil, err
	}
	path, err := findAgentCLI(a, cfg)
	if err != nil {
		return nil, err
	}
	tmpl, _, err := promptTemplate(w, env.projectRoot, w.meta.Mode, kind)
	if err != nil {
		return nil, err
	}
	argv := append([]string{a.executable(cfg)}, a.sessionArgs(cfg, expandPrompt(tmpl, env.projectRoot, w.Dir, instructions), first)...)
	return &session{path: path, name: a.name(), argv: argv, dir: env.projectRoot}, nil
}

// run runs the session on the terminal and says how the agent ended: ""
// when it exited with status 0.
func (s *session) run(in, out, errOut *os.File) (string, error) {
	ws, err := runAttached(in, out, errOut, s.path, s.argv, s.dir, childEnv())
	if err != nil {
		return "", fmt.Errorf("running %s: %w", s.path, unwrapPathError(err))
	}
	switch {
	case ws.Exited() && ws.ExitStatus() == 0:
		return "", nil
	case ws.Exited():
		return fmt.Sprintf("%s exited with status %d", s.name, ws.ExitStatus()), nil
	case ws.Signaled():
		name := signalName(ws.Signal())
		if !strings.HasPrefix(name, "SIG") {
			name = fmt.Sprintf("signal %d (%s)", int(ws.Signal()), name)
		}
		return s.name + " was ended by " + name, nil
	}
	return "", nil
}

// sessionTerminal returns the terminal a session runs on: standard input
// and output must both be one.
func sessionTerminal(env *cliEnv, cmd string) (in, out, errOut *os.File, err error) {
	in, ok := env.stdin.(*os.File)
	if !ok || !isTerminal(in) {
		return nil, nil, nil, fmt.Errorf("%s talks with you through claude, in a terminal: standard input is not one", cmd)
	}
	out = terminalBehind(env.stdout)
	if out == nil || !isTerminal(out) {
		return nil, nil, nil, fmt.Errorf("%s talks with you through claude, in a terminal: standard output is not one", cmd)
	}
	if errOut = terminalBehind(env.stderr); errOut == nil {
		errOut = out
	}
	return in, out, errOut, nil
}

// sessionFlags are setup's and edit's agent flags: --claude and
// agentFlags' (no fallback: a session is one agent's).
type sessionFlags struct {
	claude stringFlag
	agents agentFlags
}

// register adds the flags to fs.
func (f *sessionFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.claude, "claude", "")
	f.agents.register(fs, false)
}

// layers checks the flags, and reads the configuration layers below the
// workspace's: the project's and the user's, and the settings they make
// with the environment's.
func (f *sessionFlags) layers(env *cliEnv) (project, user *configLayer, base *settings, err error) {
	if err := f.claude.notBlank("--claude"); err != nil {
		return nil, nil, nil, err
	}
	if err := f.agents.check(); err != nil {
		return nil, nil, nil, err
	}
	if project, user, err = baseLayers(env.projectRoot); err != nil {
		return nil, nil, nil, err
	}
	return project, user, resolveSettings(envLayer(), project, user), nil
}

// settings are the session's settings for w: the flags over the
// environment, over w's own configuration and the layers below it.
func (f *sessionFlags) settings(w *workspace, project, user *configLayer) *settings {
	return resolveSettings(claudeFlagLayer(f.claude, &f.agents), envLayer(), w.meta.configLayer, project, user)
}
