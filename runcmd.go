package main

// This file is the run command's entry: it parses the flags (flags.go),
// catches the signals before anything else, sets the run up
// (runsetup.go), runs the loop (loop.go) and ends through finish.

import "time"

// runRun is the run command.
func runRun(env *cliEnv, args []string) error {
	opts, pos, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	r := &runner{runPlan: &runPlan{env: env, opts: opts}, start: time.Now()}
	defer r.removeTemporaries()
	// Signals first: before the terminal changes and before any child starts.
	r.sup = &supervisor{sigs: catchSignals(), interruptGrace: defaultInterruptGrace, resultWatchdog: resultWatchdogDefault}
	if opts.events.set {
		if r.events, err = openEvents(opts.events.s, env.stdout, env.stderr, r.sup.sigs); err != nil {
			return err
		}
		defer r.events.close()
		if opts.events.s == "-" {
			quiet := *env
			quiet.stdout = env.stderr // standard output carries the events alone
			r.env = &quiet
		}
	}
	becomeSubreaper()
	startReaper()
	err = r.setup(pos)
	defer r.con.settle()   // every line said written, on every way out
	defer r.lock.release() // idempotent: finish releases it first
	if eerr := r.events.settle(r.ws); eerr != nil && err == nil {
		err = eerr
	}
	if err != nil {
		r.setupFailed(err)
		r.events.write(exitEvent(errorExitCode(err), "error: "+err.Error()))
		r.events.drain(r.sup.sigs.c, false, env.stderr)
		return err
	}
	// The run's own events file, once it holds the lock (events.go).
	own := ownEvents(r)
	defer own.close()
	r.events = r.events.with(own)
	// Registered once set up; unregistered with the lock's release, on
	// every way out.
	r.lock.reg = registerRun(r, own)
	r.termMode = saveTerminalMode(env.stdin, env.stdout, env.stderr)
	r.sup.term = r.termMode
	if !opts.noKeyboard {
		r.sup.kb = openKeyboard(env.stdin)
	}
	defer r.sup.kb.close()
	r.startLive()
	end := r.protectedLoop()
	r.nextPipes.close()
	if end.signal == nil && r.sup.startBlocked() && r.sup.interrupt != nil {
		// A signal came as the run was ending on its own: it still ends the
		// run as a signal does, so that a calling shell loop stops too.
		end = r.interruptEnding()
	}
	return r.finish(end)
}
