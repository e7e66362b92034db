package main

// This file implements the config command: every configuration key with
// its effective value and the layer it came from (config.go resolves them).

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
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

Shows every configuration key with its effective value and the layer it
comes from. Layers, highest first:

  flag       command-line flags of 'run'
  env        $CLAUDE_ITERATE_CLAUDE (claude.command)
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
the wrong type, a bad stop condition — is reported with the file, the
position and the key, and exits with status 1, whatever command read it.

Options:
  --json   print {"key": {"value": …, "source": …}, …} instead of a table

` + configSetUsage + `
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
	fs := newFlagSet("config")
	asJSON := fs.Bool("json", false, "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	layers := []*configLayer{envLayer()}
	var ws *workspace
	if len(pos) == 1 {
		base := resolveSettings(envLayer(), project, user)
		ws, err = openWorkspace(env, base.WorkspacesDir, pos[0])
		if err != nil {
			return err
		}
		layers = append(layers, ws.meta.configLayer)
	}
	layers = append(layers, project, user)
	s := resolveSettings(layers...)
	if !*asJSON {
		fmt.Fprintf(env.stdout, "%s\n\n", describeProjectRoot(env))
	}
	return printSettings(env.stdout, s, ws, *asJSON)
}

func printSettings(w io.Writer, s *settings, ws *workspace, asJSON bool) error {
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
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE")
	for _, k := range configKeys {
		v := displayValue(&k, s.values[k.name])
		if k.name == "defaultMaxIterations" && s.values[k.name] == 0 {
			if ws != nil {
				v = fmt.Sprintf("0 (%d in %s mode)", defaultMaxIterationsFor(ws.meta.Mode), ws.meta.Mode)
			} else {
				v = fmt.Sprintf("0 (%d in loop mode, %d in iterative mode)", defaultMaxIterationsFor(modeLoop), defaultMaxIterationsFor(modeIterative))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.name, v, s.sources[k.name])
	}
	if err := tw.Flush(); err != nil {
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
		fmt.Fprintf(w, "%s config: %s (%s)\n", l.name, l.path, state)
	}
	return nil
}
