package main

// This file implements the config command: every configuration key with
// its effective value and the layer it came from (config.go resolves them).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
)

// displayValue formats a value for the config command's table.
func displayValue(key *configKey, v any) string {
	switch x := v.(type) {
	case nil:
		return "(none)"
	case string:
		if key.kind == kindURL {
			if x == "" {
				return "(none)"
			}
			return redactURL(x)
		}
		return x
	case []string:
		b, _ := json.Marshal(x)
		return string(b)
	case *stopConfig:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}

// jsonValue returns v in the form the config command's --json shows.
func jsonValue(key *configKey, v any) any {
	switch x := v.(type) {
	case string:
		if key.kind == kindURL {
			return redactURL(x)
		}
	case *stopConfig:
		return x
	}
	return v
}

// configUsageFormat is the manual of the config command, less its list of
// keys (%s).
const configUsageFormat = `Usage: claude-iterate config [<workspace>] [--json]
       claude-iterate config set KEY VALUE [--add|--remove] [--user|--project|--workspace WS]
       claude-iterate config unset KEY [--user|--project|--workspace WS]
       claude-iterate config get KEY [--workspace WS] [--json]

Shows every configuration key with its effective value and the layer it
comes from. Layers, highest first:

  flag       command-line flags of 'run'
  env        $CLAUDE_ITERATE_CLAUDE (claude.command), $CLAUDE_ITERATE_CODEX
             (agents.codex.command)
  workspace  "config" in <workspace>/.workspace.json (set by 'init' flags
             and 'config set --workspace'; committable)
  project    .claude-iterate.json in the project root: the nearest directory
             upwards holding claude-iterate/, .claude-iterate.json or
             .claude-iterate/ (else the current directory)
  user       $XDG_CONFIG_HOME/claude-iterate/config.json (~/.config/... by default)
  default    built in

Config files are JSON objects; keys may be nested or dotted:

  {"defaultDelay": 5, "claude": {"args": ["--model", "opus"]}}

Any fault in a configuration file — invalid JSON, an unknown key, a value of
the wrong type, a bad stop condition, a FIFO or a directory in its place —
is reported with the file, the position and the key. The commands that
need the settings (run, verify, init, setup, edit, archive restore) exit
with status 1; every other one leaves the broken file out with a warning
and goes on (answer always works). config shows the other layers, marks
the broken file and exits 1; config get says that a key cannot be read
unless a layer above the broken file sets it. A workspace's broken
.workspace.json is the same (template save and config set --workspace
need it too); the others use .metadata.json's copies of its mode and config.

Options:
  --json   print {"key": {"value": …, "source": …}, …} instead of a table

Exit status: 0 done; 1 error (a config file that cannot be read or
written); 2 usage error (an unknown key, a bad value).

` + configSetUsage + `
Getting a key:
  claude-iterate config get KEY [--workspace WS] [--json]

  get prints KEY's effective value alone (a workspace's with --workspace):
  a string as it is, anything else as JSON; with --json,
  {"value": …, "source": …}.

  claude-iterate config get claude.allowedTools --workspace demo

Keys:
%s
Examples:
  claude-iterate config
  claude-iterate config demo --json
`

// configUsage is the manual of the config command, with every key.
func configUsage() string {
	var b strings.Builder
	for _, k := range configKeys {
		fmt.Fprintf(&b, "  %s\n      %s\n", k.name, k.doc)
	}
	return fmt.Sprintf(configUsageFormat, b.String())
}

func runConfig(env *cliEnv, args []string) error {
	if len(args) > 0 && (args[0] == "set" || args[0] == "unset") {
		return runConfigSet(env, args[1:], args[0] == "unset")
	}
	if len(args) > 0 && args[0] == "get" {
		return runConfigGet(env, args[1:])
	}
	fs := newFlagSet("config")
	asJSON := fs.Bool("json", false, "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	var wsArg stringFlag
	if len(pos) == 1 {
		wsArg = stringFlag{s: pos[0], set: true}
	}
	s, ws, broken, err := effectiveSettings(env, wsArg)
	if err != nil {
		if berr := brokenError(broken); berr != nil {
			warnConfig(env, berr) // the workspace was looked for without it
		}
		return err
	}
	if !*asJSON {
		for i, line := range wrapWidth(describeProjectRoot(env), wrapAt(env.stdout), wrapAt(env.stdout)-2, 0) {
			fmt.Fprintln(env.stdout, strings.Repeat("  ", min(i, 1))+line) // a narrow output: at a slash, indented
		}
		fmt.Fprintln(env.stdout)
	}
	if err := printSettings(env.stdout, s, ws, broken, *asJSON); err != nil {
		return err
	}
	return brokenError(broken)
}

// brokenError is the error of the config files left out (nil if none):
// each one's fault, named by its file, with its hint; a file with none gets
// configFixHint's.
func brokenError(broken []brokenLayer) error {
	var msgs []string
	var hints []string
	for _, b := range broken {
		err := configFixHint(b.err, b.path)
		var he *hintError
		if errors.As(err, &he) {
			msgs, hints = append(msgs, he.err.Error()), append(hints, he.hint)
		} else {
			msgs = append(msgs, err.Error())
		}
	}
	switch {
	case len(msgs) == 0:
		return nil
	case len(hints) == 0:
		return errors.New(strings.Join(msgs, "; "))
	}
	return withHint(errors.New(strings.Join(msgs, "; ")), "%s", strings.Join(hints, "; "))
}

// effectiveSettings resolves the configuration as a run would see it, less
// its flags: of the workspace wsArg names, if set. A broken config file is
// left out, and returned in broken, for the caller to say.
func effectiveSettings(env *cliEnv, wsArg stringFlag) (*settings, *workspace, []brokenLayer, error) {
	project, user, broken := baseLayersLenient(env.projectRoot)
	layers := []*configLayer{envLayer()}
	var ws *workspace
	if wsArg.set {
		base := resolveSettings(envLayer(), project, user)
		var err error
		ws, err = lookUpWorkspace(env, base.WorkspacesDir, wsArg.s)
		if err != nil {
			return nil, nil, broken, err
		}
		if err := settingsFault(ws); err != nil {
			// Left out, as a broken project or user config: not
			// .metadata.json's copy, which may be behind it.
			broken = append(broken, brokenLayer{layerWorkspace, settingsPath(ws), err})
		} else {
			layers = append(layers, ws.meta.configLayer)
		}
	}
	layers = append(layers, project, user)
	s := resolveSettings(layers...)
	for _, b := range broken { // the layer list names them: printSettings
		s.layers = append(s.layers, &configLayer{name: b.name, path: b.path})
	}
	sort.SliceStable(s.layers, func(i, j int) bool { return layerRank(s.layers[i].name) < layerRank(s.layers[j].name) })
	return s, ws, broken, nil
}

// layerRank is how high a layer is: flag 0, env 1, ... default 5.
func layerRank(name string) int {
	for i, n := range []string{layerFlag, layerEnv, layerWorkspace, layerProject, layerUser} {
		if n == name {
			return i
		}
	}
	return 5
}

// runConfigGet runs 'config get KEY': the key's effective value alone, for
// scripts (a string as it is, anything else as JSON).
func runConfigGet(env *cliEnv, args []string) error {
	fs := newFlagSet("config get")
	asJSON := fs.Bool("json", false, "")
	var wsArg stringFlag
	fs.Var(&wsArg, "workspace", "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("missing key: claude-iterate config get KEY")
	}
	key, err := configKeyOf(pos[0])
	if err != nil {
		return err
	}
	s, _, broken, err := effectiveSettings(env, wsArg)
	if err != nil {
		if berr := brokenError(broken); berr != nil {
			warnConfig(env, berr) // the workspace was looked for without it
		}
		return err
	}
	// A broken layer below the one the value came from changes nothing;
	// one above it might set the key.
	var above []brokenLayer
	for _, b := range broken {
		if layerRank(b.name) < layerRank(s.sources[key.name]) {
			above = append(above, b)
		} else {
			warnConfig(env, b.err)
		}
	}
	if berr := brokenError(above); berr != nil {
		var he *hintError
		if errors.As(berr, &he) {
			return withHint(fmt.Errorf("%s cannot be read: %v", key.name, he.err), "%s", he.hint)
		}
		return fmt.Errorf("%s cannot be read: %v", key.name, berr)
	}
	v := jsonValue(key, s.values[key.name])
	var out []byte
	if *asJSON {
		out, err = json.Marshal(struct {
			Value  any    `json:"value"`
			Source string `json:"source"`
		}{v, s.sources[key.name]})
	} else if str, ok := v.(string); ok {
		out = []byte(str)
	} else {
		out, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.stdout, "%s\n", out)
	return writeError(err)
}

// writeConfigTable prints config's table of key, value and source; where
// it is wider than the output ($COLUMNS, or the terminal's), each key on
// a line of its own and its value and source under it, wrapped, rather
// than lines the terminal breaks anywhere (every value matters: none is
// cut short).
func writeConfigTable(w io.Writer, rows [][3]string) error {
	widths := [3]int{len("KEY"), len("VALUE"), len("SOURCE")}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	if width := outputWidth(w); width > 0 && widths[0]+widths[1]+widths[2]+4 > width {
		for _, r := range rows {
			fmt.Fprintln(w, r[0])
			for _, l := range wrapWidth(r[1]+" ("+r[2]+")", width-2, width-2, 0) {
				fmt.Fprintln(w, "  "+l)
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r[0], r[1], r[2])
	}
	return tw.Flush()
}

// wrapAt is the width at which a line to w wraps: outputWidth's, else
// any (a line is never cut).
func wrapAt(w io.Writer) int {
	if width := outputWidth(w); width > 0 {
		return width
	}
	return math.MaxInt32
}

// printSettings prints s, the settings of ws (if set) less the config
// files in broken, whose layers it marks.
func printSettings(w io.Writer, s *settings, ws *workspace, broken []brokenLayer, asJSON bool) error {
	if asJSON {
		type entry struct {
			Value  any    `json:"value"`
			Source string `json:"source"`
		}
		out := map[string]entry{}
		for _, k := range configKeys {
			out[k.name] = entry{jsonValue(&k, s.values[k.name]), s.sources[k.name]}
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	var rows [][3]string
	for _, k := range configKeys {
		v := displayValue(&k, s.values[k.name])
		if k.name == "defaultMaxIterations" && s.values[k.name] == 0 {
			if ws != nil {
				v = fmt.Sprintf("0 (%d in %s mode)", defaultMaxIterationsFor(ws.meta.Mode), ws.meta.Mode)
			} else {
				v = fmt.Sprintf("0 (%d in loop mode, %d in iterative mode)", defaultMaxIterationsFor(modeLoop), defaultMaxIterationsFor(modeIterative))
			}
		}
		if k.name == "git.commit" && s.isDefault(k.name) {
			v += " (with a worktree; without one only when set true)" // what happens: setupGit
		}
		rows = append(rows, [3]string{k.name, v, s.sources[k.name]})
	}
	if err := writeConfigTable(w, rows); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, l := range s.layers {
		if l.path == "" {
			continue
		}
		state := "found"
		if _, err := os.Stat(l.path); err != nil {
			state = "not found"
		}
		for _, b := range broken {
			if b.name == l.name {
				state = "broken: left out above"
			}
		}
		for i, line := range wrapWidth(fmt.Sprintf("%s config: %s (%s)", l.name, l.path, state), wrapAt(w), wrapAt(w)-2, 0) {
			fmt.Fprintln(w, strings.Repeat("  ", min(i, 1))+line) // a narrow output: at a slash, indented
		}
	}
	return nil
}
