package main

// This file implements the run command: its manual, its flags and their
// checks (a bad value is a usage error naming the flag and the value), and
// its entry, runRun, which parses the flags, catches the signals before
// anything else, sets the run up (runsetup.go), runs the loop (loop.go,
// iteration.go) and ends through finish.

import (
	"errors"
	"flag"
	"regexp"
	"time"
)

// runUsage is the manual of the run command.
const runUsage = `Usage: claude-iterate run [<workspace>] [flags]
       claude-iterate run --prompt PROMPT.md [flags]      (ralph mode)

Runs the agent (claude -p) again and again on the workspace's task until
.status.json says it is complete, a stop condition is met, or a stop is
requested. Each iteration sends the prompt on the agent's standard input and
reads its stream-json output.

With --prompt and no workspace (ralph mode), the current directory is the
workspace, state lives in .claude-iterate/, and PROMPT.md is sent verbatim
each iteration, re-read every time so it can be edited while the loop runs.

Options:
  -m, --max-iterations N      stop after N iterations, N at least 1 (default 50 loop, 20 iterative)
  -d, --delay SECS            seconds between iterations (default 2)
  --no-delay                  no pause between iterations
  --stagnation-threshold N    stop after N iterations in a row without
                              progress: in iterative mode without worked:true
                              (default 2), in loop mode without a higher
                              progress.completed (loop mode: 5; ralph mode:
                              never unless set); 0 never
  -v, --verbose               show the agent's text and tool calls as they stream
  -q, --quiet                 print errors only
  --output LEVEL              quiet, progress (default) or verbose
  --dry-run                   run the whole loop against a built-in mock agent,
                              on a scratch copy: the workspace is left as it
                              was; creates the named workspace if it does not
                              exist and no workspace's name is a typo away
  --prompt FILE               ralph mode: send FILE verbatim each iteration
  --agent NAME                the agent CLI: claude (default) or codex (the
                              Codex CLI, codex exec --json); also the agent
                              config key
  --fallback-agent NAME       when the agent hits its usage limit, retry the
                              iteration at once with NAME instead of waiting
                              (repeatable, or a list: codex,claude; also the
                              fallbackAgents config key); the first agent
                              runs again after its reset
  --claude PATH               claude's executable (default claude; also
                              claude.command, $CLAUDE_ITERATE_CLAUDE); codex's
                              is agents.codex.command ($CLAUDE_ITERATE_CODEX);
                              a relative path is from the current directory
                              (a key's: from its config file's)
  --model M                   passed to the agent (codex: -m)
  --max-turns N               passed to claude, N at least 1 (codex has
                              none: refused)
  --permission-mode MODE      passed to claude, e.g. acceptEdits (also the
                              claude.permissionMode config key); for codex:
                              acceptEdits is --sandbox workspace-write, plan
                              read-only, bypassPermissions no sandbox,
                              default codex's own setting; others refused
  --allowed-tools LIST        passed to claude as --allowedTools, e.g.
                              'Edit,Write,Bash(go test:*)' (also the
                              claude.allowedTools config key); refused with
                              codex, which has no per-tool permissions
  --dangerously-skip-permissions
                              passed to the agent (never saved); as root the
                              real claude refuses it unless IS_SANDBOX=1;
                              codex: --dangerously-bypass-approvals-and-sandbox

Git (see 'Git' below):
  --worktree                  run the agent in a git worktree of its own
                              (config git.worktree; init --worktree keeps it)
  --no-worktree               this run works in the main checkout, even in a
                              workspace whose config or earlier run has a
                              worktree (same as --worktree=false)
  --branch NAME               the worktree's branch (default
                              claude-iterate/<workspace>), when it is made
  --base REF                  what a new worktree's branch starts from
                              (default the current HEAD's branch)
  --commit                    commit each iteration's changes without a
                              worktree, on the current branch (config
                              git.commit: true; to keep it: 'claude-iterate
                              config set git.commit true'); a workspace that
                              has a worktree works and commits there, as
                              always: add --no-worktree for the main checkout
  --no-commit                 no commits in the worktree (git.commit: false;
                              same as --commit=false)

Stop conditions (checked after each iteration; see Conditions below):
  --until-output TEXT         complete when the iteration's final result
                              contains TEXT (e.g. '<promise>COMPLETE</promise>')
  --until-regex RE            complete when the final result matches RE
  --until-file PATH           complete when an iteration creates or changes
                              PATH, from the project root (one that leaves
                              it as it was does not complete)
                              (each --until-* may be repeated: any one completes)
  --test-cmd CMD              run CMD (with sh -c) after each iteration
  --until-tests-pass          complete when every test of --test-cmd passes
  --max-test-failures N       end the run (exit 1) after N failing test runs
                              in a row
  --test-timeout D            end a test run that takes longer (default 10m)
  --max-duration D            stop after D (e.g. 2h30m, "1h 30m"), checked
                              between iterations and in waits: an iteration
                              running goes on (--iteration-timeout bounds it);
                              a usage limit that resets after D ends the run
                              at once
  --max-cost USD              stop once the run has cost USD (e.g. 2.50)
  --max-failures N            end the run (exit 1) after N failed iterations in
                              a row (default 3); after a failed iteration the
                              next one waits 5s, doubled with each failure in
                              a row up to 5m (instead of a shorter delay,
                              also with --no-delay), so that a passing API
                              error does not end the run
  --min-iterations N          a completion claimed before iteration N is not
                              accepted: the run goes on, and the next prompt
                              asks the agent to check its work
  --accept-complete           a .status.json that says complete when the run
                              starts counts (by default only a completion
                              the agent writes during the run does)
  --verify                    when a success condition is met, run the
                              verifier ('help verify') first: pass ends the
                              run as "completed (verified)", fail or
                              needs_review goes on with its findings in the
                              next prompt; verification.maxAttempts failures
                              (default 2) end it with exit 1
  --on-question ACTION        when the agent asks a question: wait (default),
                              stop or continue (also the onQuestion config
                              key; see Questions below)
  --conditions FILE           stop conditions as JSON (below); replaces the
                              "stop" config key, and the flags above add to it

Hang protection:
  --iteration-timeout D       end an iteration that runs longer than D (also
                              the iterationTimeout config key)
  --idle-timeout D            end an iteration whose agent prints nothing for D
                              (also the idleTimeout config key); a long tool
                              call (a build, a test run) prints nothing while
                              it runs: it counts as idle, so give D room
  --interrupt-grace D         after Ctrl+C, how long the agent may clean up
                              before it is killed (default 10s)
  --no-keyboard               do not read keys from the terminal

Display and notifications:
  --heartbeat D               when the output is not a terminal (a pipe, a file,
                              CI), print a line every D while an iteration
                              runs, saying what the agent is doing (default
                              5m; 0 never)
  --notify-url URL            POST a notification to URL (ntfy-style Title,
                              Priority, Tags headers) at the run's events; also
                              the notifyUrl and notifyEvents config keys
                              (see 'help config'); credentials in the URL
                              are sent as a header and never shown; ''
                              turns notifications off for this run
  --events FILE               write the run's events to FILE as JSON Lines, as
                              they happen (- : standard output, and the
                              progress lines go to standard error): the same
                              events as notifications, each iteration with
                              its record, then {"event":"exit","exitCode":N};
                              a FIFO is waited for until a process reads it

  On a terminal, a live panel under the progress lines shows the run's state,
  iterations, elapsed time, ETA, tasks, cost, what the agent is doing now
  (the running tool, API retries, countdowns) and any stop request; with -v,
  a one-line version under the transcript. 'claude-iterate watch <ws>' shows
  the same panel from another shell. The agent's text is shown with control
  characters and escape sequences written out; the log keeps the raw bytes.

Questions:
  The agent may ask the user a question by writing "question": "…" in
  .status.json. --on-question (config onQuestion) says what the run does:
  wait (default): wait, without running the agent, until
                  'claude-iterate answer <ws> TEXT' answers it; s, .stop,
                  Ctrl+C and --max-duration end the wait as any other
  stop            end the run (exit 0), its reason naming the question
  continue        go on; the question is logged and notified
  The answer goes to the next iteration's prompt and to the workspace's
  ANSWERS.md. A question still pending when a run starts is waited on, or
  stopped on, before the first iteration; a status the agent writes
  without it withdraws it. A completion claimed with a question (wait,
  stop) is not accepted: the agent claims it again once answered.

Stopping:
  s                           stop after the current iteration (again: cancel)
  claude-iterate stop <ws>    the same from another shell
  Ctrl+C                      interrupt the agent, wait for it, exit 130
  Ctrl+C twice                kill the agent and all it started, exit 130
  Ctrl+\ (SIGQUIT)            like Ctrl+C twice, at once, exit 131
  kill -TERM                  SIGTERM to the agent, SIGKILL after 5s, exit 143
  closing the terminal        the same, by SIGHUP: exit 129
  Ctrl+Z, fg, bg              suspend and resume everything

Conditions:
  A conditions file (or the "stop" key of .claude-iterate.json or of a
  workspace's config) holds up to three lists and the test command:

    {"success":    [...],   the task is done: exit 0, status completed
     "failure":    [...],   give up: exit 1, status failed
     "conditions": [...],   stop: exit 0, status stopped
     "test_cmd": "go test -json ./...", "test_timeout": "5m"}

  Each condition is {"type": T, fields...}; T is one of
    max_iterations {count}           max_duration {duration: "1h 30m"}
    max_cost {usd}                   failure_streak {count}
    test_failure_streak {count}      no_progress {iterations}
    all_tests_pass                   specific_tests_pass {tests: [names]}
    task_complete                    output_pattern {pattern, is_regex}
    file_created {path}              file_contains {path, content}
    on_error {pattern (optional)}    custom_script {script, args, timeout}
    user_signal                      never
    all {conditions: [...]}          any {conditions: [...]}
    not {condition: {...}}
  (file_contains looks in files of up to 1 MiB; a file left from before the
  run counts for file_created and file_contains once an iteration changes it;
  after a completion is refused — by the verifier, --min-iterations or a
  failed iteration — its files count again only once an iteration writes
  them again, and the next prompt says so; under not, a file is a state)

  After each iteration the first met condition ends the run and names the
  reason: failure conditions first, then success, then the others; within
  a list by priority (on_error, user_signal, max_*, streaks and no_progress,
  tests and task_complete, output_pattern, files, custom_script, all/any,
  not, never). The loop's own stops are conditions too: -m is
  max_iterations, --max-failures failure_streak, stagnation no_progress,
  the s key and the .stop file user_signal, and .status.json's "complete"
  is task_complete, a success condition that any success condition you
  give replaces (add {"type":"task_complete"} to keep it). The decisions
  take of .status.json only what the agent wrote during the iteration
  judged (complete, worked, a rise of progress, a question): a claim left
  by an earlier iteration or run counts for nothing (see --accept-complete),
  and after a failed iteration no success condition is met.
  output_pattern sees only the iteration's final result text, never the
  prompt or tool output. Paths and scripts are relative to the project
  root, where the agent works (its worktree with --worktree), whatever
  directory the run starts in; the test command runs there too. A
  custom_script is met when it exits 0 (default timeout 1m).
  Test results are read from go test -json or -v output, TAP, or an
  "N passed, N failed" line; otherwise the test command is one test that
  passes on exit status 0. 'claude-iterate status' shows each condition's
  progress.

Git:
  With --worktree the agent works in claude-iterate/worktrees/<workspace>, a
  git worktree on branch claude-iterate/<workspace>, made from the current
  HEAD and kept out of the main checkout's git status by the repository's
  info/exclude. The main checkout's HEAD, index and files are never touched;
  the workspace's own files stay where they are (claude gets their
  directory with --add-dir), and the prompts' project root, the tests and
  the conditions' paths are the worktree's. The next run
  reuses the worktree and its branch. Each iteration that leaves changes
  ends with one commit on the branch: subject "<workspace>: iteration N:
  <the agent's summary>", body the duration, cost and tools, trailers
  Claude-Iterate-Run and Claude-Iterate-Iteration; the agent's own commits
  stay as they are, ignored files and the workspace's files stay out. A
  commit that fails (a pre-commit hook) leaves the changes in place and
  says why in the log and the record (commitError); the record's "commit"
  is the sha or null. A file over 50 MiB a commit takes is named in a
  warning. With --commit alone (no worktree) a file you had changed before
  an iteration stays out of its commit, with a warning (the record's
  commitLeftOut), but an edit made in the checkout during an iteration is
  taken as the agent's: such a run does not start beside another live run
  in the same checkout, nor another beside it (use --worktree). Changes a killed run left uncommitted are committed
  by the next run, as recovered. A repository without user.name/user.email
  commits as claude-iterate <claude-iterate@localhost> (git -c; the
  configuration is not changed). Submodules are not checked out in the
  worktree (a warning says how). 'claude-iterate merge' and 'pr' bring the
  branch back; 'clean' removes the worktree without losing work.

Tool calls refused by claude (no permission flag) are named after each
iteration; an iteration whose calls were refused and that made no progress
fails. Allow the tools with --permission-mode acceptEdits or --allowed-tools
LIST (saved with 'init' or 'config set claude.permissionMode acceptEdits'),
or --dangerously-skip-permissions inside a sandbox.

With --agent codex, the Codex CLI runs each iteration (codex exec --json,
the prompt on stdin, the system prompt as -c developer_instructions); its
commands and file changes count as the record's tools "command" and
"file_change", a command its sandbox refused is a refused call, and its
cost is estimated from its tokens (agents.codex.pricing), marked so in the
record and in status; --max-cost counts the estimate. A usage limit of
either agent waits for the reset plus a minute (no reset time: 5 minutes,
again and again but for --max-duration), then retries the iteration
uncounted; or, with --fallback-agent, retries it at once with the next
agent (the record's agent and agentChange say which ran and why).

Prompts: system.md, iteration.md (setup.md, edit.md) are built in; a
<workspace>/prompts/NAME.md, else .claude-iterate/prompts/MODE/NAME.md
overrides one; {{projectRoot}}, {{workspacePath}}, {{instructions}} in it
are replaced.

Exit status: 0 completed or stopped; 1 error, failure condition, or max
iterations reached right after a failed iteration; 2 usage error;
129/130/131/143 after SIGHUP/SIGINT/SIGQUIT/SIGTERM.

Examples:
  claude-iterate run demo
  claude-iterate run demo --dry-run
  claude-iterate run demo -v -m 5 --max-duration 1h
  claude-iterate run --prompt PROMPT.md --until-output '<promise>COMPLETE</promise>' -m 10
  claude-iterate run demo --test-cmd 'go test -json ./...' --until-tests-pass
  claude-iterate run demo --conditions stop.json
`

// runOptions are the run command's flags.
type runOptions struct {
	settingFlags                               // those init takes too
	maxTurns, maxFailures                      countFlag
	noDelay, verbose, quiet, skipPerms, dryRun bool
	noKeyboard                                 bool
	output, prompt, claude, model              stringFlag
	maxDuration, iterationTimeout, idleTimeout durationFlag
	interruptGrace, heartbeat                  durationFlag
	events                                     stringFlag
	minIterations                              countFlag
	verify                                     bool
	onQuestion                                 stringFlag
	acceptComplete                             bool
	// The worktree and the commits (gitrun.go).
	worktree, noWorktree, commit, noCommit bool
	branch, base                           stringFlag
	// given holds the flags on the command line, by name: a bool flag a
	// config key also sets says false as well as true (--worktree=false).
	given map[string]bool

	// Stop conditions.
	maxCost                            usdFlag
	untilOutput, untilRegex, untilFile listFlag // each may be repeated
	testCmd, conditions                stringFlag
	untilTestsPass                     bool
	maxTestFailures                    countFlag
	testTimeout                        durationFlag
}

// parseRunFlags parses run's flags; on an error, the options it read so
// far come with it (runRun writes the exit event to the --events given).
func parseRunFlags(args []string) (*runOptions, []string, error) {
	o := &runOptions{}
	fs := newFlagSet("run")
	o.settingFlags.register(fs)
	fs.BoolVar(&o.noDelay, "no-delay", false, "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.BoolVar(&o.verbose, "verbose", false, "")
	fs.BoolVar(&o.quiet, "q", false, "")
	fs.BoolVar(&o.quiet, "quiet", false, "")
	fs.Var(&o.output, "output", "")
	fs.BoolVar(&o.skipPerms, "dangerously-skip-permissions", false, "")
	fs.BoolVar(&o.dryRun, "dry-run", false, "")
	fs.Var(&o.prompt, "prompt", "")
	fs.Var(&o.claude, "claude", "")
	fs.Var(&o.model, "model", "")
	fs.Var(&o.maxTurns, "max-turns", "")
	fs.Var(&o.maxDuration, "max-duration", "")
	fs.Var(&o.iterationTimeout, "iteration-timeout", "")
	fs.Var(&o.idleTimeout, "idle-timeout", "")
	fs.Var(&o.maxFailures, "max-failures", "")
	fs.Var(&o.interruptGrace, "interrupt-grace", "")
	fs.BoolVar(&o.noKeyboard, "no-keyboard", false, "")
	fs.Var(&o.heartbeat, "heartbeat", "")
	fs.Var(&o.events, "events", "")
	fs.Var(&o.minIterations, "min-iterations", "")
	fs.BoolVar(&o.verify, "verify", false, "")
	fs.Var(&o.onQuestion, "on-question", "")
	fs.BoolVar(&o.acceptComplete, "accept-complete", false, "")
	fs.Var(&o.maxCost, "max-cost", "")
	o.untilRegex.check = func(s string) error {
		if _, err := regexp.Compile(s); err != nil {
			return errors.New(regexpErrorText(err))
		}
		return nil
	}
	fs.Var(&o.untilOutput, "until-output", "")
	fs.Var(&o.untilRegex, "until-regex", "")
	fs.Var(&o.untilFile, "until-file", "")
	fs.Var(&o.testCmd, "test-cmd", "")
	fs.BoolVar(&o.untilTestsPass, "until-tests-pass", false, "")
	fs.Var(&o.maxTestFailures, "max-test-failures", "")
	fs.Var(&o.testTimeout, "test-timeout", "")
	fs.Var(&o.conditions, "conditions", "")
	fs.BoolVar(&o.worktree, "worktree", false, "")
	fs.BoolVar(&o.noWorktree, "no-worktree", false, "")
	fs.Var(&o.branch, "branch", "")
	fs.Var(&o.base, "base", "")
	fs.BoolVar(&o.commit, "commit", false, "")
	fs.BoolVar(&o.noCommit, "no-commit", false, "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return o, nil, err
	}
	o.given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.given[f.Name] = true })
	if err := firstError(o.model.notBlank("--model"), o.prompt.notBlank("--prompt"), o.testCmd.notBlank("--test-cmd"), o.conditions.notBlank("--conditions"), o.events.notBlank("--events")); err != nil {
		return o, nil, err
	}
	for _, f := range []struct {
		name string
		v    durationFlag
	}{{"--max-duration", o.maxDuration}, {"--test-timeout", o.testTimeout}} {
		if f.v.set && f.v.d == 0 {
			return o, nil, usagef("invalid value %q for flag %s: must be above 0", "0", f.name)
		}
	}
	if o.heartbeat.set && o.heartbeat.d > 0 && o.heartbeat.d < time.Second {
		return o, nil, usagef("invalid value %q for flag --heartbeat: must be 0 (never) or at least 1s", o.heartbeat.d)
	}
	if err := o.checkNotifyURL(); err != nil {
		return o, nil, err
	}
	if err := o.maxTestFailures.notZero("--max-test-failures"); err != nil {
		return o, nil, err
	}
	if o.onQuestion.set {
		if err := checkOnQuestion(o.onQuestion.s); err != nil {
			return o, nil, usagef("invalid value %q for flag --on-question: %v", o.onQuestion.s, err)
		}
	}
	if o.verbose && o.quiet {
		return o, nil, usagef("-v/--verbose and -q/--quiet contradict each other")
	}
	if o.output.set {
		if err := checkOutputLevel(o.output.s); err != nil {
			return o, nil, usagef("invalid value %q for flag --output: %v", o.output.s, err)
		}
		if o.verbose || o.quiet {
			return o, nil, usagef("--output and -v/-q contradict each other")
		}
	}
	for _, b := range o.negatable() {
		if o.given[b.name] && o.given["no-"+b.name] {
			return o, nil, usagef("--%s and --no-%s contradict each other", b.name, b.name)
		}
	}
	if err := firstError(o.branch.notBlank("--branch"), o.base.notBlank("--base")); err != nil {
		return o, nil, err
	}
	if o.noDelay && o.delay.set {
		return o, nil, usagef("--no-delay and -d/--delay contradict each other")
	}
	if o.maxIterations.set && o.maxIterations.n == 0 {
		return o, nil, errZeroIterations
	}
	if err := firstError(o.maxFailures.notZero("--max-failures"), o.maxTurns.notZero("--max-turns")); err != nil {
		return o, nil, err
	}
	if err := checkPermissionFlags(o.permissionMode, o.allowedTools); err != nil {
		return o, nil, err
	}
	if o.claude.set && o.claude.s == "" {
		return o, nil, usagef("invalid value \"\" for flag --claude: empty")
	}
	if err := o.agents.check(); err != nil {
		return o, nil, err
	}
	if len(pos) == 0 && !o.prompt.set {
		return o, nil, usagef("missing workspace (or --prompt FILE for ralph mode)")
	}
	return o, pos, nil
}

// errZeroIterations refuses -m 0, which the config's 0 (the mode's
// default, 50 or 20) would otherwise turn into 50 iterations silently.
var errZeroIterations = usagef("invalid value \"0\" for flag -m/--max-iterations: must be at least 1 (leave it out for the mode's default)")

// flagSettings is the flag layer of the configuration.
func (o *runOptions) flagSettings() *configLayer {
	l := &configLayer{name: layerFlag, values: map[string]any{}}
	// The run's mode reads one of the stagnation keys.
	o.settingFlags.addTo(l.values, "defaultStagnationThreshold", "loopStagnationThreshold")
	if o.noDelay {
		l.values["defaultDelay"] = 0.0
	}
	switch {
	case o.output.set:
		l.values["outputLevel"] = o.output.s
	case o.verbose:
		l.values["outputLevel"] = outputVerbose
	case o.quiet:
		l.values["outputLevel"] = outputQuiet
	}
	if o.claude.set {
		l.values["claude.command"] = o.claude.s
	}
	if o.minIterations.set {
		l.values["minIterations"] = o.minIterations.n
	}
	if o.iterationTimeout.set {
		l.values["iterationTimeout"] = o.iterationTimeout.d.String()
	}
	if o.idleTimeout.set {
		l.values["idleTimeout"] = o.idleTimeout.d.String()
	}
	// A bool flag a key also sets: given, it says true or false
	// (--verify=false); its --no- form says the opposite.
	if o.given["verify"] {
		l.values["verification.autoVerify"] = o.verify
	}
	if o.onQuestion.set {
		l.values["onQuestion"] = o.onQuestion.s
	}
	for _, b := range o.negatable() {
		if o.given[b.name] {
			l.values[b.key] = b.on
		}
		if o.given["no-"+b.name] {
			l.values[b.key] = !b.off
		}
	}
	return l
}

// negatableFlag is a bool flag of run that has a --no- form: its name, the
// config key both set, and the values they were given.
type negatableFlag struct {
	name, key string
	on, off   bool
}

// negatable lists run's bool flags that have a --no- form: given both is a
// usage error; either sets the key.
func (o *runOptions) negatable() []negatableFlag {
	return []negatableFlag{{"commit", "git.commit", o.commit, o.noCommit}, {"worktree", "git.worktree", o.worktree, o.noWorktree}}
}

// runRun is the run command.
func runRun(env *cliEnv, args []string) error {
	opts, pos, err := parseRunFlags(args)
	if opts == nil || errors.Is(err, errHelp) {
		return err
	}
	usageErr := err
	r := &runner{runPlan: &runPlan{env: env, opts: opts}, start: time.Now()}
	defer r.removeTemporaries()
	// Signals first: before the terminal changes and before any child starts.
	r.sup = &supervisor{sigs: catchSignals(), interruptGrace: defaultInterruptGrace, resultWatchdog: resultWatchdogDefault}
	if opts.events.set {
		if r.events, err = openEvents(opts.events.s, env.stdout, env.stderr, r.sup.sigs); err != nil {
			return firstError(usageErr, err)
		}
		defer r.events.close()
		if opts.events.s == "-" {
			quiet := *env
			quiet.stdout = env.stderr // standard output carries the events alone
			r.env = &quiet
		}
	}
	if usageErr == nil { // before anything is made: gitworktree.go
		usageErr = refuseGitDir(env.projectRoot, "the project root")
	}
	if usageErr != nil { // a usage error found once --events was read
		r.events.write(exitEvent(errorExitCode(usageErr), "error: "+usageErr.Error()))
		r.events.drain(r.sup.sigs.c, false, env.stderr)
		return usageErr
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
		if errorExitCode(err) == exitUsage {
			setupRefused(r) // gitrun.go
		} else {
			r.setupFailed(err)
		}
		removeNewState(r.newState, r.lock)
		r.events.write(exitEvent(errorExitCode(err), "error: "+err.Error()))
		r.events.drain(r.sup.sigs.c, false, env.stderr)
		return err
	}
	reportLostConsole(r.con, r.log)
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
