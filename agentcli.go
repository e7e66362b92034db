package main

// This file is the seam between the tool and the agent CLIs it drives. The
// loop, the record, the stop conditions, the display, the notifications and
// verify never ask which CLI runs: they get an agentCLI, its child spec,
// and the events its stream decoder makes, in the tool's own event shape
// (streamEvent: the shape of claude's stream-json, which the tool read
// first). claude is the default; its adapter is agent_claude.go, whose
// stream is read by the fast path as it always was. codex is the second
// (agent_codex.go, codexstream.go).
//
// A new adapter (Gemini CLI's `gemini -p --output-format stream-json`,
// opencode, ...) is one file that provides an agentCLI and adds it to
// agentCLIs:
//
//   - name: the word --agent, the config key "agent" and the record use;
//   - executable: the command the settings name for it (a config key
//     agents.NAME.command and an environment variable, documented in
//     'help config'), and installHint: how to install it when it is
//     missing (exit 2);
//   - iterationArgs: the arguments of one loop iteration, the prompt going
//     to its standard input; the system prompt where the CLI takes one;
//     the tool's permission settings mapped onto the CLI's (a setting with
//     no meaning for it is refused here, a usage error, never ignored);
//     the model;
//   - verifierArgs: the same, read-only (the verifier must not write),
//     and verifierRefusedHint: the fix when the verifier's calls were
//     refused ("": claude's, which names the allowed tools);
//   - newDecoder: a decoder of its output, one line at a time, into
//     streamEvents: text as assistant text blocks; tool calls as tool_use
//     blocks (their name counts in the record's tools, their command or
//     path shows on the activity line) and their ends as tool_result
//     blocks; one result event at the end with is_error, the final text,
//     the cost (or an estimate, costEstimated) and the usage; refused
//     calls as the result's permission_denials; a usage limit as a result
//     whose text isLimitText knows (limits.go); nil for the claude
//     stream-json fast path;
//   - refusedHint: how to let it use its tools, shown once when it
//     refused some; and, optionally, stderrRefusals: the refusals that
//     only its stderr tells (codex's rejected patches), and
//     sessionRefusals: those only its session file tells (codex's
//     commands refused at once, codexrollout.go);
//   - sessionArgs: its arguments for setup and edit, run on the terminal
//     with a system prompt and a first message.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// agentCLI is one agent CLI's adapter (see the file comment).
type agentCLI interface {
	name() string
	executable(cfg *settings) string
	installHint() string
	iterationArgs(r *runPlan) ([]string, error)
	verifierArgs(cfg *settings, model string) ([]string, error)
	newDecoder(cfg *settings) streamDecoder
	refusedHint() string
	sessionArgs(cfg *settings, systemPrompt, first string) []string
	verifierRefusedHint() string
}

// flagChecker is an agent that refuses some of the run's settings (flags
// without meaning for it): checked for every agent of the run before any
// CLI is looked for, as a usage error comes before a missing CLI (fixing
// that first would only lead to it).
type flagChecker interface {
	checkFlags(r *runPlan) error
}

// costEstimator is an agent whose CLI reports no cost: the tool estimates
// it from tokens, and shows it marked ≈. A dry run's mock speaks claude's
// stream, cost and all; for such an agent its cost is marked the same, so
// that the dry run shows what the run will.
type costEstimator interface {
	estimatesCost() bool
}

// estimatesCost reports whether a's cost is an estimate (costEstimator).
func estimatesCost(a agentCLI) bool {
	ce, ok := a.(costEstimator)
	return ok && ce.estimatesCost()
}

// streamDecoder turns an agent's output lines into the tool's events;
// decode calls emit for each event of a line (none for a line that says
// nothing the tool uses). An error is a line that is not the CLI's.
type streamDecoder interface {
	decode(line []byte, emit func(*streamEvent)) error
}

// Agent names.
const (
	agentClaude = "claude"
	agentCodex  = "codex"
)

// agentCLIs are the adapters, by name.
var agentCLIs = map[string]agentCLI{
	agentClaude: claudeAgent{},
	agentCodex:  codexAgent{},
}

// agentNames are the adapters' names, as messages list them.
func agentNames() []string { return []string{agentClaude, agentCodex} }

// lookupAgent returns the adapter named name, or a usage error with a
// did-you-mean.
func lookupAgent(name, what string) (agentCLI, error) {
	if a, ok := agentCLIs[name]; ok {
		return a, nil
	}
	return nil, usagef("%s", unknownAgentText(name, what))
}

// checkAgentName checks a config value naming an agent.
func checkAgentName(name string) error {
	if _, ok := agentCLIs[name]; ok {
		return nil
	}
	return errors.New(unknownAgentText(name, ""))
}

// unknownAgentText says name is no agent, and which one it likely meant.
func unknownAgentText(name, what string) string {
	msg := fmt.Sprintf("unknown agent %q", name)
	if what != "" {
		msg = fmt.Sprintf("invalid value %q for %s: unknown agent", name, what)
	}
	best, bestDist := "", 3
	for _, n := range agentNames() {
		if d := editDistance(strings.ToLower(name), n); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg + " (want one of " + strings.Join(agentNames(), ", ") + ")"
}

// findAgentCLI finds agent a's executable, as the settings name it: its
// absolute path, or an error that says why it cannot be used
// (agentLookupError): claude's ends the command with exit 1 (SPEC.md §3),
// another agent's is a usage error, exit 2. It is the one place an agent's
// or a verifier's executable is resolved: the path checked is the path
// started (agentCommandPath), whatever the agent's working directory.
func findAgentCLI(a agentCLI, cfg *settings) (string, error) {
	cmd := a.executable(cfg)
	resolved, inFile := agentCommandPath(a, cfg, cmd)
	path, err := exec.LookPath(resolved)
	if err == nil {
		if abs, aerr := filepath.Abs(path); aerr == nil {
			path = abs
		}
		return path, nil
	}
	if inFile {
		cmd = resolved // where it was looked for: not relative to here
	}
	err = agentLookupError(a.name(), cmd, commandOrigin(a, cfg), a.installHint(), err)
	if a.name() == agentClaude {
		return "", err
	}
	return "", &inputError{err}
}

// agentCommandPath is cmd, agent a's executable as cfg names it, ready to
// look up and start from any directory: a bare name (no slash) is left for
// $PATH; a relative path is made absolute against the directory it was
// given from: the current directory for a flag or an environment variable
// (as --prompt's), the directory of the config file that set it for a
// config key (the project root for .claude-iterate.json, the user config's
// directory, the workspace's directory for its config.json: each file's
// paths read the same wherever it is). The agent runs in the project root
// (Go starts a relative path against the child's directory), so a path
// left relative would be checked in one place and started in another.
// inFile says a config file's directory was the base.
func agentCommandPath(a agentCLI, cfg *settings, cmd string) (path string, inFile bool) {
	if !strings.ContainsRune(cmd, '/') || filepath.IsAbs(cmd) {
		return cmd, false
	}
	key := "agents." + a.name() + ".command"
	if a.name() == agentClaude {
		key = "claude.command"
	}
	base := ""
	switch layer := cfg.sources[key]; layer {
	case layerFlag, layerEnv, layerDefault, "":
	default:
		for _, l := range cfg.layers {
			if l.name == layer && l.path != "" {
				base = filepath.Dir(l.path)
			}
		}
	}
	inFile = base != ""
	if !inFile {
		wd, err := os.Getwd()
		if err != nil {
			return cmd, false
		}
		base = wd
	}
	return filepath.Join(base, cmd), inFile
}

// agentsFound refuses a run whose agents (cfg's agent, then its fallback
// agents) are not all installed, as resolveAgent would, but before the run
// holds the workspace: a missing program is a bad input, and the workspace
// keeps its state (a new one stays new). A setting an agent has no meaning
// for is told first, as resolveAgent does (installing the agent would only
// lead to it: agent-usage-first.txtar); other faults of the agents'
// settings are left to resolveAgent, which reports them in order. A dry
// run's agent is the built-in mock: dry, nothing is looked for.
func agentsFound(env *cliEnv, wsName string, opts *runOptions, cfg *settings, dry bool) error {
	if dry || checkAgentConfig(cfg, env.projectRoot, wsName) != nil {
		return nil // resolveAgent reports a fault of the config, with its file
	}
	chain, err := agentChain(cfg)
	if err != nil {
		return nil
	}
	if err := checkAgentSettings(opts, cfg, chain); err != nil {
		return err
	}
	if err := checkAgentFlags(&runPlan{env: env, opts: opts, cfg: cfg}, chain); err != nil {
		return err
	}
	for _, a := range chain {
		if _, err := findAgentCLI(a, cfg); err != nil {
			return err
		}
	}
	return nil
}

// commandOrigin says where cfg took agent a's executable from, for a hint:
// its flag, its environment variable, or its config key and file.
func commandOrigin(a agentCLI, cfg *settings) string {
	key := "agents." + a.name() + ".command"
	flag, env := "", codexCommandEnv
	if a.name() == agentClaude {
		key, flag, env = "claude.command", "--claude", "CLAUDE_ITERATE_CLAUDE"
	}
	switch layer := cfg.sources[key]; {
	case layer == layerFlag && flag != "":
		return flag
	case layer == layerEnv:
		return "$" + env
	case layer == layerDefault || layer == "" || layer == layerFlag:
		return strings.TrimPrefix(flag+" / ", " / ") + key
	default:
		return key + " (in " + layerPath(cfg, layer, "") + ")"
	}
}

// agentChain is the agents of a run: the first, then the fallbacks, in
// order, each named once.
func agentChain(cfg *settings) ([]agentCLI, error) {
	first, err := lookupAgent(cfg.Agent, "agent")
	if err != nil {
		return nil, err
	}
	chain := []agentCLI{first}
	for _, n := range cfg.FallbackAgents {
		a, err := lookupAgent(n, "fallback agent")
		if err != nil {
			return nil, err
		}
		for _, have := range chain {
			if have.name() == n {
				return nil, usagef("fallback agent %q is already in the run's agents (%s)", n, chainNames(chain))
			}
		}
		chain = append(chain, a)
	}
	return chain, nil
}

// chainNames lists agents' names, as messages show them.
func chainNames(chain []agentCLI) string {
	var names []string
	for _, a := range chain {
		names = append(names, a.name())
	}
	return strings.Join(names, ", ")
}

// codexCommandEnv names codex's executable, as $CLAUDE_ITERATE_CLAUDE names
// claude's (config key agents.codex.command).
const codexCommandEnv = "CLAUDE_ITERATE_CODEX"

// agentEnvLayer adds the agent variables to the environment layer.
func agentEnvLayer(l *configLayer) {
	if c := os.Getenv(codexCommandEnv); c != "" {
		l.values["agents.codex.command"] = c
	}
}

// runAgent is one of a run's agents, ready to start.
type runAgent struct {
	cli  agentCLI
	spec childSpec
}

// agentChainText lists a run's agents, for the log.
func agentChainText(agents []runAgent) string {
	var names []string
	for _, a := range agents {
		names = append(names, a.cli.name())
	}
	return strings.Join(names, ", then ")
}

// checkAgentSettings refuses run flags that name settings of an agent the
// run does not use: never accepted and then ignored.
func checkAgentSettings(opts *runOptions, cfg *settings, chain []agentCLI) error {
	uses := func(name string) bool {
		for _, a := range chain {
			if a.name() == name {
				return true
			}
		}
		return false
	}
	if opts.claude.set && !uses(agentClaude) {
		return usagef("--claude names claude's executable, and the run's agents are %s: name codex's with agents.codex.command or $%s", chainNames(chain), codexCommandEnv)
	}
	return nil
}

// checkAgentFlags refuses, before any CLI is looked for, the settings an
// agent of the run has no meaning for (flagChecker), and those its
// verifier refuses.
func checkAgentFlags(r *runPlan, chain []agentCLI) error {
	for _, a := range chain {
		if fc, ok := a.(flagChecker); ok {
			if err := fc.checkFlags(r); err != nil {
				return err
			}
		}
	}
	if !r.cfg.Verification.Auto {
		return nil
	}
	a := chain[0]
	if n := r.cfg.Verification.Agent; n != "" && n != a.name() {
		var err error
		if a, err = lookupAgent(n, "verification.agent"); err != nil {
			return err
		}
	}
	_, err := a.verifierArgs(r.cfg, r.opts.model.s)
	return err
}

// agentFlags are --agent (run, verify, setup, edit) and --fallback-agent
// (run): each name checked as it is given.
type agentFlags struct {
	agent    stringFlag
	fallback listFlag
}

// register adds the flags to fs; --fallback-agent only withFallback.
func (a *agentFlags) register(fs *flag.FlagSet, withFallback bool) {
	fs.Var(&a.agent, "agent", "")
	if withFallback {
		a.fallback.check = func(s string) error {
			for _, n := range splitToolList(s) {
				if err := checkAgentName(n); err != nil {
					return err
				}
			}
			return nil
		}
		fs.Var(&a.fallback, "fallback-agent", "")
	}
}

// check checks --agent's value.
func (a *agentFlags) check() error {
	if a.agent.set {
		if _, err := lookupAgent(a.agent.s, "flag --agent"); err != nil {
			return err
		}
	}
	return nil
}

// fallbacks are the names --fallback-agent gives, in order.
func (a *agentFlags) fallbacks() []string {
	var names []string
	for _, v := range a.fallback.vals {
		names = append(names, splitToolList(v)...)
	}
	return names
}

// addTo stores the flags' values as config keys in values.
func (a *agentFlags) addTo(values map[string]any) {
	if a.agent.set {
		values["agent"] = a.agent.s
	}
	if len(a.fallback.vals) > 0 {
		values["fallbackAgents"] = a.fallbacks()
	}
}

// agentChildSpec is the spec that starts agent a at path, its arguments
// to be set: its name for messages, its stream's decoder.
func agentChildSpec(a agentCLI, cfg *settings, path string) childSpec {
	spec := childSpec{path: path, argv0: a.executable(cfg), name: a.name(), costEstimated: estimatesCost(a)}
	if a.newDecoder(cfg) != nil {
		spec.decoder = func() streamDecoder { return a.newDecoder(cfg) }
	}
	if r, ok := a.(interface {
		stderrRefusals(tail string) []permissionDenial
	}); ok {
		spec.stderrRefusals = r.stderrRefusals
	}
	if r, ok := a.(interface {
		sessionRefusals(args, env []string, session string, shown []permissionDenial) ([]permissionDenial, int)
	}); ok {
		spec.sessionRefusals = r.sessionRefusals
	}
	return spec
}

// claudeFlagLayer is the configuration the --claude and --agent flags of
// setup and edit set.
func claudeFlagLayer(f stringFlag, agents *agentFlags) *configLayer {
	l := &configLayer{name: layerFlag, values: map[string]any{}}
	if f.set {
		l.values["claude.command"] = f.s
	}
	agents.addTo(l.values)
	return l
}

// agentFault is a setting that the run's agents could not use: key, the
// setting at fault, and why.
type agentFault struct {
	key string
	msg string
}

// agentFaultKeys are the keys an agentFault may involve: a change to one
// of them can make or mend one.
var agentFaultKeys = []string{"agent", "fallbackAgents", "claude.allowedTools", "claude.permissionMode"}

// agentSettingsFaults are the agent settings of cfg that no run could use:
// a fallback agent named twice or the same as the agent, a setting with
// no meaning for one of the agents (claude.allowedTools, a permission
// mode codex has no sandbox for). config set, config unset and init
// refuse them as they are set; run reports those that came from config
// anyway (layers that disagree) as config errors naming the layer.
func agentSettingsFaults(cfg *settings) []agentFault {
	var faults []agentFault
	seen := map[string]bool{cfg.Agent: true}
	codex := cfg.Agent == agentCodex
	for _, n := range cfg.FallbackAgents {
		switch {
		case n == cfg.Agent:
			faults = append(faults, agentFault{"fallbackAgents", fmt.Sprintf("fallback agent %q is the agent itself (agent: %s)", n, cfg.Agent)})
		case seen[n]:
			faults = append(faults, agentFault{"fallbackAgents", fmt.Sprintf("fallback agent %q is named twice", n)})
		}
		seen[n] = true
		codex = codex || n == agentCodex
	}
	if !codex {
		return faults
	}
	if len(cfg.AllowedTools) > 0 {
		faults = append(faults, agentFault{"claude.allowedTools", fmt.Sprintf("claude.allowedTools (%s) has no codex meaning, and codex is one of the agents: codex has no per-tool permissions; use claude.permissionMode acceptEdits (codex's workspace-write sandbox)", clip(strings.Join(cfg.AllowedTools, ","), 80))})
	}
	if _, err := codexSandbox(cfg.PermissionMode, false); err != nil {
		faults = append(faults, agentFault{"claude.permissionMode", err.Error()})
	}
	return faults
}

// configUnsetCommand is the command that unsets key in the layer named
// layer (ws: the workspace, for its layer).
func configUnsetCommand(key, layer, ws string) string {
	cmd := progName + " config unset " + key
	switch layer {
	case layerUser:
		cmd += " --user"
	case layerWorkspace:
		cmd += " --workspace " + shellQuote(ws)
	}
	return cmd
}

// layerPath is the file of cfg's layer named name, as shown to the user.
func layerPath(cfg *settings, name, projectRoot string) string {
	for _, l := range cfg.layers {
		if l.name == name && l.path != "" {
			return relPath(projectRoot, l.path)
		}
	}
	return name + " config"
}

// checkAgentConfig reports the first agent setting of the run that came
// from config and that its agents could not use: a config error (exit 1)
// naming the key and its file, with the command that unsets it there.
// Those the flags gave are left to agentChain and the adapters, usage
// errors.
func checkAgentConfig(cfg *settings, projectRoot, ws string) error {
	for _, f := range agentSettingsFaults(cfg) {
		layer := cfg.sources[f.key]
		if layer == layerFlag {
			continue
		}
		return withHint(&fileError{Path: layerPath(cfg, layer, projectRoot), Key: f.key, Msg: f.msg}, "%s", configUnsetCommand(f.key, layer, ws))
	}
	return nil
}
