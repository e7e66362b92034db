package main

var runCommand = &command{
	name:    "run",
	summary: "run the agent in a loop on a workspace's task",
	usage: `Usage: claude-iterate run [<workspace>] [flags]
       claude-iterate run --prompt PROMPT.md [flags]      (ralph mode)

Runs the agent (claude -p) again and again on the workspace's task until
.status.json says it is complete, a stop condition is met, or a stop is
requested. Each iteration sends the prompt on the agent's standard input and
reads its stream-json output.

With --prompt and no workspace (ralph mode), the current directory is the
workspace, state lives in .claude-iterate/, and PROMPT.md is sent verbatim
each iteration, re-read every time so it can be edited while the loop runs.

Options:
  -m, --max-iterations N      stop after N iterations (default 50 loop, 20 iterative)
  -d, --delay SECS            seconds between iterations (default 2)
  --no-delay                  no pause between iterations
  --stagnation-threshold N    iterative mode: stop after N iterations without
                              work (default 2; 0 never)
  -v, --verbose               show the agent's text and tool calls as they stream
  -q, --quiet                 print errors only
  --output LEVEL              quiet, progress (default) or verbose
  --dry-run                   run the whole loop against a built-in mock agent;
                              creates the named workspace if it does not exist
  --prompt FILE               ralph mode: send FILE verbatim each iteration
  --claude PATH               the agent executable (default claude; also
                              claude.command, $CLAUDE_ITERATE_CLAUDE)
  --model M                   passed to the agent
  --max-turns N               passed to the agent
  --dangerously-skip-permissions
                              passed to the agent (never saved); as root the
                              real CLI refuses it unless IS_SANDBOX=1

Stop conditions:
  --max-duration D            stop after D (e.g. 2h30m)
  --max-cost USD              stop once the agent's reported cost reaches USD
  --until-output TEXT         stop when an iteration's final result contains TEXT
  --until-regex RE            stop when an iteration's final result matches RE
  --until-file PATH           stop when PATH exists
  --test-cmd CMD              run CMD (with sh -c) after each iteration
  --until-tests-pass          with --test-cmd: stop when it passes
  --max-test-failures N       with --test-cmd: fail after N failing runs in a row
  --conditions FILE           stop conditions as JSON (see below)
  --max-failures N            end the run (exit 1) after N failed iterations in
                              a row (default 3)

Hang protection:
  --iteration-timeout D       end an iteration that runs longer than D
  --idle-timeout D            end an iteration whose agent prints nothing for D
  --interrupt-grace D         after Ctrl+C, how long the agent may clean up
                              before it is killed (default 10s)
  --no-keyboard               do not read keys from the terminal

Stopping:
  s                           stop after the current iteration (again: cancel)
  claude-iterate stop <ws>    the same from another shell
  Ctrl+C                      interrupt the agent, wait for it, exit 130
  Ctrl+C twice                kill the agent and all it started, exit 130
  Ctrl+Z, fg, bg              suspend and resume everything

Exit status: 0 completed or stopped; 1 error or failure condition; 2 usage
error; 129/130/143 after SIGHUP/SIGINT/SIGTERM.

Examples:
  claude-iterate run demo
  claude-iterate run demo --dry-run
  claude-iterate run demo -v -m 5 --max-duration 1h
  claude-iterate run --prompt PROMPT.md --until-output '<promise>COMPLETE</promise>' -m 10
`,
	run: func(env *cliEnv, args []string) error { return nil },
}
