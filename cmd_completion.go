package main

// This file implements shell completion. The rules are: the scripts
// ('completion bash|zsh|fish') hold no list of their own — they ask the
// binary (the hidden command __complete, given the words typed so far, the
// last one being completed), so that completion always matches the
// binary: its commands and subcommands, each command's flags as its manual
// lists them, and the names of the workspaces (and templates, archives);
// the values of the flags that take one of a few (flagValues); where the
// binary has nothing to offer (another flag's value), the shell completes
// file names.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// completeCommand is the hidden command the completion scripts call.
const completeCommand = "__complete"

// completionUsage is the manual of the completion command.
const completionUsage = `Usage: claude-iterate completion bash|zsh|fish

Prints a script that completes claude-iterate's commands, flags and
workspace names in the shell. Load it from the shell's startup file:

  bash   source <(claude-iterate completion bash)          (~/.bashrc)
  zsh    source <(claude-iterate completion zsh)           (~/.zshrc, after compinit)
  fish   claude-iterate completion fish | source           (~/.config/fish/config.fish)

Exit status: 0 printed; 2 usage error (an unknown shell).
`

// Completion scripts, one per shell.
const (
	bashCompletion = `# bash completion for claude-iterate
_claude_iterate() {
	local IFS=$'\n'
	COMPREPLY=($(claude-iterate __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _claude_iterate claude-iterate
`
	zshCompletion = `#compdef claude-iterate
# zsh completion for claude-iterate
_claude_iterate() {
	local -a c
	c=("${(@f)$(claude-iterate __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	if (( ${#c} )) && [[ -n ${c[1]} ]]; then
		compadd -a c
	else
		_files
	fi
}
compdef _claude_iterate claude-iterate
`
	fishCompletion = `# fish completion for claude-iterate
function __claude_iterate_complete
	set -l words (commandline -opc)
	set -e words[1]
	claude-iterate __complete $words (commandline -ct) 2>/dev/null
end
complete -c claude-iterate -a '(__claude_iterate_complete)'
`
)

func runCompletion(env *cliEnv, args []string) error {
	pos, err := parseFlags(newFlagSet("completion"), args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("missing shell: bash, zsh or fish")
	}
	script := map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}[pos[0]]
	if script == "" {
		return usagef("unknown shell %q: want bash, zsh or fish", pos[0])
	}
	_, err = fmt.Fprint(env.stdout, script)
	return writeError(err)
}

// subcommands are the commands that take a subcommand first.
var subcommands = map[string][]string{
	"archive":  {"list", "save", "show", "restore", "delete"},
	"template": {"save", "list", "show", "delete"},
	"config":   {"get", "set", "unset"},
}

// flagInUsage finds the flags a manual lists: on its option lines, and in
// its Usage lines.
var flagInUsage = lazyRegexp(`(?:^|[\s\[|,(])(--?[a-z][a-z0-9-]*)`)

// runComplete prints the candidates for the last of words, one a line.
func runComplete(env *cliEnv, words []string) int {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	var cands []string
	if len(words) == 1 {
		for _, c := range commandTable() {
			cands = append(cands, c.name)
		}
	} else {
		cands = completeArgs(env, words[0], words[1:len(words)-1], cur)
	}
	for _, c := range cands {
		if strings.HasPrefix(c, cur) {
			fmt.Fprintln(env.stdout, c)
		}
	}
	return exitOK
}

// completeArgs returns what may follow words (after command name) at cur.
func completeArgs(env *cliEnv, name string, words []string, cur string) []string {
	c := lookupCommand(name)
	if c == nil {
		return nil
	}
	takes := valueFlags(c.manual())
	if f, v, ok := strings.Cut(cur, "="); ok && strings.HasPrefix(f, "-") {
		var out []string
		for _, val := range flagValues[f] {
			if strings.HasPrefix(val, v) {
				out = append(out, f+"="+val)
			}
		}
		return out
	}
	if n := len(words); n > 0 && strings.HasPrefix(words[n-1], "-") && !strings.Contains(words[n-1], "=") {
		prev := words[n-1]
		if vals, ok := flagValues[prev]; ok {
			return vals
		}
		if prev == "--workspace" {
			return workspaceNames(env)
		}
		if takes[prev] {
			return nil // the shell's file names
		}
	}
	if strings.HasPrefix(cur, "-") {
		return usageFlags(c.manual())
	}
	var positional []string
	for i, w := range words {
		switch {
		case strings.HasPrefix(w, "-"):
		case i > 0 && (takes[words[i-1]] || flagValues[words[i-1]] != nil):
			// the value of the flag before it
		default:
			positional = append(positional, w)
		}
	}
	if subs := subcommands[name]; subs != nil && len(positional) == 0 {
		return subs
	}
	switch name {
	case "help":
		var names []string
		for _, c := range commandTable() {
			names = append(names, c.name)
		}
		return names
	case "completion":
		return []string{"bash", "zsh", "fish"}
	case "init", "version", "list", "ps", "serve":
		return nil
	}
	if name == "config" && len(positional) == 1 && positional[0] != "" && slices.Contains(subcommands[name], positional[0]) {
		var keys []string
		for _, k := range configKeys {
			keys = append(keys, k.name)
		}
		return keys
	}
	if name == "template" && len(positional) > 0 && positional[0] != "save" {
		return templateNames(env)
	}
	if name == "archive" && len(positional) > 0 && positional[0] != "save" && positional[0] != "list" {
		return archiveFileNames(env)
	}
	return workspaceNames(env)
}

// flagValues are the values of the flags that take one of a few, in any
// command that has them.
var flagValues = map[string][]string{
	"--on-question": {onQuestionWait, onQuestionStop, onQuestionContinue},
	"--depth":       {depthQuick, depthStandard, depthDeep},
	"--mode":        {modeLoop, modeIterative},
	"--output":      {outputQuiet, outputProgress, outputVerbose},
}

// valueInUsage finds a flag and its value's name in a manual's option
// lines ("  -m, --max-iterations N", "  --mode loop|iterative") and usage
// lines ("[--run N]").
var valueInUsage = lazyRegexp(`(?m)(?:^\s+(?:(-[a-z]), )?|\[)(--?[a-z][a-z0-9-]*) (?:[A-Z][A-Z_]*|[a-z]+(?:\|[a-z]+)+)`)

// valueFlags returns the flags of a manual that take a value.
func valueFlags(usage string) map[string]bool {
	out := map[string]bool{}
	for _, m := range valueInUsage().FindAllStringSubmatch(usage, -1) {
		out[m[2]] = true
		if m[1] != "" {
			out[m[1]] = true
		}
	}
	return out
}

// usageFlags returns the flags a manual lists, sorted, each once.
func usageFlags(usage string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range flagInUsage().FindAllStringSubmatch(usage, -1) {
		if f := m[1]; !seen[f] && f != "-" {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// workspaceNames returns the names of the workspaces; a broken config
// file is left out, without a word (a completion prints names only), and
// so is a workspaces directory that is a symbolic link (linkedDir).
func workspaceNames(env *cliEnv) []string {
	dir, _ := workspacesDirLenient(env)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.projectRoot, dir)
	}
	if linkedDir(dir) {
		return nil
	}
	return namedWorkspaces(env.projectRoot, dir)
}

// templateNames returns the names of the templates, project and user's;
// the project's templates directory is left out when it is a symbolic
// link (linkedDir). The user's is the user's own (a dotfile manager's
// link is followed, as for the user config).
func templateNames(env *cliEnv) []string {
	project, user := templateDirs(env)
	var names []string
	if !linkedDir(project) {
		names = dirNames(project, nil)
	}
	if user != "" {
		names = append(names, dirNames(user, nil)...)
	}
	return names
}

// linkedDir reports whether a directory of the project that a completion
// lists is a symbolic link (one an agent may have put there): not
// followed, as every command that reads archives refuses one
// (archiveDirLink), so no name from where it leads is offered.
func linkedDir(dir string) bool {
	fi, err := os.Lstat(dir)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// archiveFileNames returns the archives' names, .tar.gz left out; none
// from an archive directory that is a symbolic link (linkedDir).
func archiveFileNames(env *cliEnv) []string {
	dir := filepath.Join(env.projectRoot, archiveDirName)
	if linkedDir(dir) {
		return nil
	}
	entries, _ := readDir(dir)
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".tar.gz"); ok && e.Type().IsRegular() && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	return out
}

// dirNames returns the valid names of the directories in dir that pass
// keep (nil: all).
func dirNames(dir string, keep func(path string) bool) []string {
	entries, _ := readDir(dir)
	var out []string
	for _, e := range entries {
		if e.IsDir() && validName(e.Name()) && (keep == nil || keep(filepath.Join(dir, e.Name()))) {
			out = append(out, e.Name())
		}
	}
	return out
}
