package main

// This file implements the permission flags of run and init: claude -p
// asks before it writes a file or runs a command, and nobody can answer, so
// a first run with the real CLI fails on refused tool calls unless the
// tools are allowed. The rules are: --permission-mode MODE and
// --allowed-tools LIST are passed to claude as --permission-mode and
// --allowedTools, after claude.args; init saves them in the workspace's
// config (claude.permissionMode, claude.allowedTools), run gives them for
// one run; MODE is one of claude's modes (checkPermissionMode), the tool
// list is split at commas. The verifier gets the same settings
// less the write tools (verify.go).

import (
	"errors"
	"slices"
	"strings"
)

// checkPermissionFlags checks the values of --permission-mode and
// --allowed-tools.
func checkPermissionFlags(mode, tools stringFlag) error {
	if mode.set {
		if err := checkPermissionMode(mode.s); err != nil {
			return usagef("invalid value %q for flag --permission-mode: %v", mode.s, err)
		}
	}
	if tools.set && len(splitToolList(tools.s)) == 0 {
		return usagef("invalid value %q for flag --allowed-tools: want tool names separated by commas, e.g. Edit,Write,Bash", tools.s)
	}
	return nil
}

// claudeModes are the permission modes claude takes: the choices its
// --help lists (claude 2.1.330, scripts/install-claude.sh), and default,
// which it takes too. Codex's are a subset (codexSandbox). A mode outside
// them would fail every iteration the same way (claude exits 1 on it).
var claudeModes = []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "manual", "plan"}

// checkPermissionMode checks a permission mode: one of claudeModes.
func checkPermissionMode(s string) error {
	if !slices.Contains(claudeModes, s) {
		return errors.New("want one of claude's modes: " + strings.Join(claudeModes, ", "))
	}
	return nil
}

// splitToolList splits a comma-separated list of tools, dropping empty
// names.
func splitToolList(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// addPermissionSettings stores the flags' values as config keys in values.
func addPermissionSettings(values map[string]any, mode, tools stringFlag) {
	if mode.set {
		values["claude.permissionMode"] = mode.s
	}
	if tools.set {
		values["claude.allowedTools"] = splitToolList(tools.s)
	}
}

// permissionArgs are claude's arguments for the permission settings.
func permissionArgs(cfg *settings) []string {
	return permissionArgsOf(cfg.PermissionMode, cfg.AllowedTools)
}

// permissionArgsOf are claude's arguments for a permission mode and a list
// of allowed tools, each left out when empty.
func permissionArgsOf(mode string, tools []string) []string {
	var args []string
	if mode != "" {
		args = append(args, "--permission-mode", mode)
	}
	if len(tools) > 0 {
		args = append(args, "--allowedTools", strings.Join(tools, ","))
	}
	return args
}

// writeTools are claude's tools that change files: the verifier, which
// only reads, never gets them.
var writeTools = []string{"Write", "Edit", "MultiEdit", "NotebookEdit"}

// isWriteTool reports whether a tool, or an allowedTools entry such as
// "Write(src/**)", names one of writeTools.
func isWriteTool(name string) bool {
	name, _, _ = strings.Cut(name, "(")
	for _, w := range writeTools {
		if strings.TrimSpace(name) == w {
			return true
		}
	}
	return false
}

// withoutWriteTools is the allowedTools list less its write tools.
func withoutWriteTools(tools []string) []string {
	var out []string
	for _, t := range tools {
		if !isWriteTool(t) {
			out = append(out, t)
		}
	}
	return out
}
