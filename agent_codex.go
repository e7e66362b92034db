package main

// This file is codex's adapter (agentcli.go): the OpenAI Codex CLI
// (@openai/codex), run as `codex exec --json`, the prompt on its standard
// input ("-"). Its arguments are, in order: exec, --json,
// --skip-git-repo-check (the loop runs where the user says, git or not),
// agents.codex.args, the permission settings mapped onto codex's sandbox,
// -m MODEL, the system prompt as the developer_instructions config
// override (-c), then "-".
//
// Permissions: claude's default asks and, in -p mode, refuses; codex exec
// never asks, and its configured sandbox (read-only out of the box) refuses
// instead. So:
//
//	(no mode), default  nothing: codex's own sandbox_mode decides
//	acceptEdits         --sandbox workspace-write
//	plan                --sandbox read-only
//	bypassPermissions,  --dangerously-bypass-approvals-and-sandbox
//	--dangerously-skip-permissions
//
// Any other mode, claude.allowedTools (--allowed-tools) and --max-turns have
// no codex meaning and are refused, a usage error. claude.args go to claude
// only, agents.codex.args to codex only.
//
// The system prompt: developer_instructions adds to codex's own
// instructions, as --append-system-prompt does to claude's
// (model_instructions_file would replace them, tool guidance and all). It
// is an argument: one over the kernel's argument limit is refused before
// the first iteration.
//
// Codex reports tokens, not dollars: the cost is estimated from
// agents.codex.pricing (codexstream.go), and the record says so.

import (
	"fmt"
	"slices"
	"strings"
)

// codexAgent is codex's adapter.
type codexAgent struct{}

// codexSettings are the agents.codex keys.
type codexSettings struct {
	Command string
	Args    []string
	Pricing codexPricing
}

// codexPricing is USD per million tokens.
type codexPricing struct {
	Input, CachedInput, Output float64
}

// codexDefaultPricing is OpenAI's list price of gpt-5-codex, as of
// codexPricingDate: an estimate's rates, which agents.codex.pricing
// overrides for another model or a new price.
var codexDefaultPricing = codexPricing{Input: 1.25, CachedInput: 0.125, Output: 10}

// codexPricingDate is when codexDefaultPricing was read.
const codexPricingDate = "gpt-5-codex list price, 2025-09"

func (codexAgent) name() string { return agentCodex }

func (codexAgent) executable(cfg *settings) string { return cfg.Codex.Command }

func (codexAgent) installHint() string {
	return "install the Codex CLI: npm install -g @openai/codex (or set agents.codex.command / $" + codexCommandEnv + " to its path)"
}

// codexSandbox maps the tool's permission settings onto codex's flags.
func codexSandbox(mode string, skipPerms bool) ([]string, error) {
	if skipPerms {
		return []string{"--dangerously-bypass-approvals-and-sandbox"}, nil
	}
	switch mode {
	case "", "default":
		return nil, nil
	case "acceptEdits":
		return []string{"--sandbox", "workspace-write"}, nil
	case "plan":
		return []string{"--sandbox", "read-only"}, nil
	case "bypassPermissions":
		return []string{"--dangerously-bypass-approvals-and-sandbox"}, nil
	}
	return nil, fmt.Errorf("permission mode %q has no codex meaning (codex takes default, acceptEdits, plan or bypassPermissions)", mode)
}

// estimatesCost: codex reports tokens, no cost (costEstimator).
func (codexAgent) estimatesCost() bool { return true }

// checkFlags refuses the run's settings that have no codex meaning, or
// that contradict each other: usage errors, told before codex's CLI is
// looked for (flagChecker).
func (codexAgent) checkFlags(r *runPlan) error {
	_, err := codexRunSandbox(r)
	return err
}

// codexRunSandbox is the sandbox flags of the run's settings, or the usage
// error that refuses them.
func codexRunSandbox(r *runPlan) ([]string, error) {
	if len(r.cfg.AllowedTools) > 0 {
		return nil, usagef("--allowed-tools / claude.allowedTools (%s) has no codex meaning: codex has no per-tool permissions; use --permission-mode acceptEdits (codex's workspace-write sandbox), or drop --allowed-tools for codex", clip(strings.Join(r.cfg.AllowedTools, ","), 80))
	}
	if r.opts.maxTurns.set {
		return nil, usagef("--max-turns has no codex meaning: codex exec runs one turn")
	}
	sandbox, err := codexSandbox(r.cfg.PermissionMode, r.opts.skipPerms)
	if err != nil {
		return nil, usagef("%v", err)
	}
	if arg := codexSandboxArg(r.cfg.Codex.Args); arg != "" && len(sandbox) > 0 {
		return nil, &inputError{withHint(fmt.Errorf("agents.codex.args has %s, and the run's permission setting gives codex %s: codex would take one of them, or refuse both", arg, strings.Join(sandbox, " ")),
			"choose the sandbox in one place: remove %s from agents.codex.args, or drop the permission setting for codex", arg)}
	}
	return sandbox, nil
}

func (codexAgent) iterationArgs(r *runPlan) ([]string, error) {
	sandbox, err := codexRunSandbox(r)
	if err != nil {
		return nil, err
	}
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	args = append(args, r.cfg.Codex.Args...)
	args = append(args, sandbox...)
	if slices.Contains(sandbox, "workspace-write") {
		// gitrun.go: the workspace, outside the worktree, is writable too
		// (codex's read-only sandbox writes nowhere; its bypass everywhere).
		args = append(args, r.gitSetup.agentArgs(r.ws)...)
	}
	if r.opts.model.set {
		args = append(args, "-m", r.opts.model.s)
	}
	if r.systemPrompt != "" {
		arg := "developer_instructions=" + tomlString(r.systemPrompt)
		if len(arg) > maxArgBytes {
			return nil, withHint(fmt.Errorf("the system prompt is %d bytes, over the %d bytes the kernel takes in one argument, which is where codex takes it (-c developer_instructions)", len(r.systemPrompt), maxArgBytes),
				"shorten the system prompt (%s)", r.systemPromptSource)
		}
		args = append(args, "-c", arg)
	}
	return append(args, "-"), nil
}

// verifierArgs are codex's read-only arguments: its read-only sandbox,
// whatever the run's permissions (the verifier must not write). User
// arguments that choose another sandbox are refused: codex 0.171.0 lets
// --dangerously-bypass-approvals-and-sandbox win over --sandbox read-only,
// and the verifier wrote (TestRealCodex/verify-readonly).
func (codexAgent) verifierArgs(cfg *settings, model string) ([]string, error) {
	if arg := codexSandboxArg(cfg.Codex.Args); arg != "" {
		return nil, &inputError{withHint(fmt.Errorf("agents.codex.args has %s, which would let the verifier write: codex's verifier runs in its read-only sandbox", arg),
			"remove %s from agents.codex.args for verify (claude-iterate config unset agents.codex.args), or verify with --agent claude", arg)}
	}
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	args = append(args, cfg.Codex.Args...)
	args = append(args, "--sandbox", "read-only")
	if model != "" {
		args = append(args, "-m", model)
	}
	return append(args, "-"), nil
}

// codexSandboxArg returns the first of args that chooses codex's sandbox or
// approvals (a flag, or a -c override of sandbox_mode or
// sandbox_workspace_write), or "".
func codexSandboxArg(args []string) string {
	for i, a := range args {
		name, value, _ := strings.Cut(a, "=")
		switch {
		case name == "--dangerously-bypass-approvals-and-sandbox", name == "--yolo", name == "--approve-for-me",
			name == "--sandbox", name == "--add-dir", name == "-s", strings.HasPrefix(a, "-s") && !strings.HasPrefix(a, "--"):
			return a
		case name == "-c" || name == "--config":
			shown := a
			if value == "" && i+1 < len(args) {
				value = args[i+1]
				shown += " " + value
			}
			if strings.HasPrefix(strings.TrimSpace(value), "sandbox") {
				return shown
			}
		case strings.HasPrefix(a, "-c") && !strings.HasPrefix(a, "--") && strings.HasPrefix(strings.TrimSpace(a[2:]), "sandbox"):
			return a
		}
	}
	return ""
}

func (codexAgent) newDecoder(cfg *settings) streamDecoder {
	return &codexDecoder{pricing: cfg.Codex.Pricing}
}

func (codexAgent) refusedHint() string {
	return `codex's sandbox refused commands or writes: let it write in the project with --permission-mode acceptEdits ` +
		`(codex's workspace-write sandbox; to keep it: claude-iterate config set claude.permissionMode acceptEdits), ` +
		`or run with --dangerously-skip-permissions (no sandbox; only inside a container or VM)`
}

// sessionArgs are codex's interactive arguments (its terminal UI):
// agents.codex.args, the system prompt as developer_instructions, the first
// message.
func (codexAgent) sessionArgs(cfg *settings, systemPrompt, first string) []string {
	args := append([]string{}, cfg.Codex.Args...)
	return append(args, "-c", "developer_instructions="+tomlString(systemPrompt), first)
}

func (codexAgent) verifierRefusedHint() string {
	return "codex's verifier runs in its read-only sandbox (--sandbox read-only): its writes are refused by design, and a check that needs to write (a build's output, a test cache) cannot run there; run that check with --test-cmd instead"
}

// tomlString is s as a TOML basic string, the form of a -c value: quotes,
// backslashes and control characters escaped.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
