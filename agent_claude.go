package main

// This file is claude's adapter (agentcli.go): Claude Code in -p mode, the
// tool's default agent. Its arguments are, in order: claude.args, the
// permission settings (permissions.go), -p --output-format stream-json
// --verbose, the system prompt (sysprompt.go), then
// --dangerously-skip-permissions, --model and --max-turns when given. Its
// stream is stream-json, read by the fast path (streamfast.go); its
// executable is claude.command (--claude, $CLAUDE_ITERATE_CLAUDE).

import "fmt"

// claudeAgent is claude's adapter.
type claudeAgent struct{}

func (claudeAgent) name() string { return agentClaude }

func (claudeAgent) executable(cfg *settings) string { return cfg.ClaudeCommand }

func (claudeAgent) installHint() string {
	return "install Claude Code (npm install -g @anthropic-ai/claude-code), or set --claude / claude.command"
}

// iterationArgs are claude's arguments for a loop iteration; r.spec.path is
// the executable (its --help says whether it takes a prompt file).
func (claudeAgent) iterationArgs(r *runPlan) ([]string, error) {
	var args []string
	args = append(args, r.cfg.ClaudeArgs...)
	args = append(args, permissionArgs(r.cfg)...)
	args = append(args, r.gitSetup.agentArgs(r.ws)...) // gitrun.go: the workspace, outside the worktree
	args = append(args, "-p", "--output-format", "stream-json", "--verbose")
	if r.systemPrompt != "" {
		promptArgs, err := r.systemPromptArgs()
		if err != nil {
			return nil, err
		}
		args = append(args, promptArgs...)
	}
	if r.opts.skipPerms {
		args = append(args, "--dangerously-skip-permissions")
	}
	if r.opts.model.set {
		args = append(args, "--model", r.opts.model.s)
	}
	if r.opts.maxTurns.set {
		args = append(args, "--max-turns", fmt.Sprint(r.opts.maxTurns.n))
	}
	return args, nil
}

func (claudeAgent) verifierArgs(cfg *settings, model string) ([]string, error) {
	return verifierArgs(cfg, model), nil
}

// newDecoder is nil: claude's stream-json is the tool's own, read by the
// fast path.
func (claudeAgent) newDecoder(*settings) streamDecoder { return nil }

func (claudeAgent) refusedHint() string { return refusedHint }

// sessionArgs are claude's interactive arguments: claude.args, the system
// prompt appended, the first message.
func (claudeAgent) sessionArgs(cfg *settings, systemPrompt, first string) []string {
	args := append([]string{}, cfg.ClaudeArgs...)
	return append(args, "--append-system-prompt", systemPrompt, first)
}

// verifierRefusedHint is "": the verifier names the tools to allow
// (verifierRefusedHint in verify.go).
func (claudeAgent) verifierRefusedHint() string { return "" }

// verifierArgs are the verifier's arguments: the user's claude args, the
// workspace's permissions less the write tools, the read-only restriction,
// the stream-json options.
func verifierArgs(cfg *settings, model string) []string {
	args := append([]string{}, cfg.ClaudeArgs...)
	args = append(args, permissionArgsOf(cfg.PermissionMode, withoutWriteTools(cfg.AllowedTools))...)
	args = append(append(args, "--disallowedTools"), writeTools...)
	args = append(args, "-p", "--output-format", "stream-json", "--verbose")
	if model != "" {
		args = append(args, "--model", model)
	}
	return args
}
