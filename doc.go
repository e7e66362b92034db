package main

// The code map: where things are, for the next maintainer. main.go's
// package comment is the user's manual; this is the maintainer's. The
// package is flat (one package main, as the design asks): what makes it
// navigable is one file rule for commands, one file per concern, and this
// map, which TestCodeMap keeps true (it names every source file).
//
// # Commands
//
// Each command's manual, flags and body live in cmd_<command>.go, and a
// subcommand or mode too big for its command's file in
// cmd_<command>_<sub>.go: cmd_init.go, cmd_setup.go, cmd_edit.go,
// cmd_run.go, cmd_stop.go, cmd_verify.go, cmd_answer.go, cmd_watch.go
// (and cmd_watch_all.go, watch --all), cmd_ps.go, cmd_serve.go,
// cmd_logs.go, cmd_list.go (and cmd_list_json.go, list --json),
// cmd_status.go, cmd_history.go, cmd_reset.go,
// cmd_clean.go, cmd_merge.go, cmd_pr.go, cmd_archive.go, cmd_template.go,
// cmd_config.go (and cmd_config_set.go, set and unset),
// cmd_completion.go, cmd_version.go and cmd_help.go (which holds the
// program's manual). Around them: cli.go (the command table, dispatch,
// and the one place an error becomes an exit status: report), flags.go
// (the parsing every command shares), wsargs.go (which workspace a
// command's arguments name), cliout.go (hints, confirmation, output that
// stays right on a pipe), text.go (durations, money, sizes, plurals, text
// clipped to a width), and main.go.
//
// # One run, from the command line to a record and out
//
//  1. cli.go dispatches "run" to runRun (cmd_run.go), which parses the
//     flags into runOptions.
//  2. runsetup.go sets the run up: the workspace (workspace.go,
//     workspacesettings.go, workspacecreate.go, task.go), the
//     configuration's layers (config.go, configvalue.go, userconfig.go, secreturl.go), the one-run
//     lock (lock.go, writelock.go; a command's claim of a workspace,
//     claim.go), the stop conditions (conditions.go, conditionsjson.go;
//     the file conditions' targets, condfile.go), the agent and its fallbacks (agentcli.go,
//     fallback.go), the git worktree and branch (gitrun.go,
//     gitworktree.go; a failed add undone, gitundo.go; the worktree
//     still the workspace's own, on its branch, before git runs in it,
//     gitworktreecheck.go; exclude files git would hang on refused first,
//     gitexclude.go; a run that commits in a checkout kept alone there,
//     checkoutlock.go), what the run inherits from the last one (runsetup.go:
//     inherited), what an earlier run left running (leftovers.go), and the
//     run's entry in the registry of live runs (registry.go; where the
//     user's state and config directories go, userdirs.go). It yields a
//     runPlan, never changed afterwards. What it checks and says before it
//     writes (a --prompt read first, a refused run's new ralph state
//     removed, the project root named) is in inputcheck.go, shared with
//     init and setup.
//  3. loop.go runs the loop (runner): before each agent it looks at the
//     signals (signals.go, signals_*.go) and at a stop request
//     (stopfile.go, keyboard.go); between iterations it waits, for an
//     answer (question.go) or for a usage limit's reset (limits.go), or
//     hands the iteration to a fallback agent (fallback.go); and it asks
//     the verifier (verifier.go, verdict.go) when the agent claims
//     completion.
//  4. iteration.go runs one iteration: the prompt (prompts.go, notes.go,
//     sysprompt.go), the agent started through its adapter (agent.go,
//     agent_claude.go, agent_codex.go) as a supervised child (child.go,
//     proc_linux.go, proc_darwin.go), under the one event loop of the run
//     (supervisor.go), which owns the signals, Ctrl+Z (suspend.go,
//     suspend_*.go, ttyhold.go, termguard.go, termios.go, termios_*.go),
//     the hang watchdogs and the sweep of the process tree (sweep.go,
//     reaper.go, reaper_*.go).
//  5. The agent's stdout is decoded into streamEvents: claude's
//     stream-json by streamjson.go and its fast path streamfast.go (with
//     jsonscan.go, jsonstring.go); codex's JSON Lines by codexstream.go and
//     its fast path codexfast.go (codexcommand.go shows its commands as the
//     model wrote them; codexrollout.go finds in its session file the
//     commands its sandbox refused that the stream did not show). Each event is formatted for the transcript
//     (transcript.go, sanitize.go), followed on the activity line
//     (activity.go), and read into the iteration's outcome (outcome.go,
//     limits.go, denials.go, permissions.go; errtext.go reduces an error
//     the agent gives as the API's JSON body to its message).
//  6. The iteration yields one record (record.go), judged on what the
//     agent wrote this iteration (evidence.go, statusfile.go,
//     statuswatch.go) and the files it changed (gitfiles.go; a file git
//     waits on named and gone round, gitstall.go), and
//     committed on the workspace's branch (gitcommit.go; on the user's
//     checkout without the user's own edits, gitmine.go). The record is
//     appended to history.jsonl (history.go; read back a piece at a time
//     by historyscan.go), and all else derives from it: the counters and
//     the stop conditions (loop.go, conditions.go), the events (events.go),
//     the notifications (notify.go), and the live view (live.go,
//     livehuman.go), which the console (console.go, panel.go; a console
//     that cannot be written, consolelost.go) draws and which the run writes to its state file (runstate.go) for the other
//     views: watch (cmd_watch.go), ps and watch --all (runview.go), serve
//     (serveapi.go, serveauth.go, serveevents.go, servepage/).
//  7. Every way out goes through runner.finish (loop.go) and endings.go,
//     which decides the exit status and keeps the ending truthful: a full
//     disk (diskspace.go), a workspace replaced under the run (wsgone.go),
//     a signal that comes as it ends (signallate.go).
//
// # Files, and what else
//
// Every file the tool reads goes through safefile.go (safefile_*.go),
// every file it writes through safewrite.go (safereplace.go: a file of
// the tool's own the agent replaced is put back): TestOneReader and
// TestOneWriter hold that; heldfile.go watches the files a run keeps open
// for writing (log, events, history, .lock) for a removal or a
// replacement mid-run. jsonfile.go is the tool's JSON files, logfile.go
// the per-run log, gitignore.go keeps the runtime files out of git,
// gitstate.go reads what the views show of a workspace's branch,
// gitclean.go is clean's part for a worktree, archive.go, archivelimits.go
// and restore.go are archives, template.go templates, session.go the agent CLI run on the
// terminal for setup and edit, dryrun.go and mock.go the --dry-run mock
// agent, testrun.go the test command and scripts, regexps.go the lazily
// compiled expressions, build_other.go the refusal to build for another
// system than Linux and macOS.
//
// # Where to make the common changes
//
//   - An outcome of an iteration: outcome.go decides it, record.go carries
//     it, endings.go maps it to an exit status; pin it in outcomes_test.go
//     and an outcome-*.txtar scenario.
//   - Ctrl+Z and fg: suspend.go (and suspend_*.go), ttyhold.go,
//     termguard.go, supervisor.go; the pty-*.txtar scenarios drive them
//     through a pseudo-terminal (pty_test.go).
//   - A notification event: events.go names the event and its fields,
//     notify.go decides which are sent and how (notify*.txtar).
//   - A stop condition: conditions.go evaluates it, conditionsjson.go reads
//     it, cmd_status.go shows it (cond-*.txtar).
//   - An agent CLI: one file like agent_codex.go that provides an agentCLI
//     (agentcli.go's header says what it must provide) and a stream decoder
//     like codexstream.go; a fake of it for the scenarios like
//     fakecodex_test.go, and real-CLI scenarios like testdata/realcodex.
//   - A command: cmd_<command>.go, an entry in cli.go's commandTable,
//     main.go's and cmd_help.go's lists, cmd_completion.go, the README.
