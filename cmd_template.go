package main

// This file implements the template command: save, list, show and delete
// (a template itself is template.go's). The rules are: save never
// overwrites a template without -f; delete asks on a terminal, or needs -f;
// show redacts a notify URL's secrets; a project template, which can go
// into git, never holds them (a --global one, outside the project, does).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// templateUsage is the manual of the template command.
const templateUsage = `Usage: claude-iterate template save <workspace> <name> [--global] [-f]
       claude-iterate template list
       claude-iterate template show <name> [--global]
       claude-iterate template delete <name> [--global] [-f]

Templates keep a workspace's task to start others from:
'claude-iterate init <workspace> --template <name>'. A template holds the
workspace's INSTRUCTIONS.md, its mode and its configuration (its
.workspace.json), not its progress, logs or TODO.md.

Project templates live in claude-iterate/templates in the project root (so
they can be committed with the project); with --global, in the user's
config directory ($XDG_CONFIG_HOME/claude-iterate/templates). A name is
looked up in the project first, then the user's. A notify URL with
credentials (a password, a ?token=) is left out of a project template,
and said so; a --global template keeps it, in a file only you can read.

  save     saves the workspace as template <name>; -f replaces one
  list     lists the templates: name, scope, mode, and the task's first line
  show     prints a template: where it is, its mode, config and task
  delete   removes a template; asks on a terminal, elsewhere needs -f

Exit status: 0 done; 1 error (no such template, one that exists without
-f); 2 usage error.

Examples:
  claude-iterate template save api-migration migration
  claude-iterate init api-v2 --template migration
  claude-iterate template save lint lint --global
  claude-iterate template delete migration -f
`

func runTemplate(env *cliEnv, args []string) error {
	if len(args) == 0 {
		return usagef("missing subcommand: save, list, show or delete")
	}
	sub, rest := args[0], args[1:]
	if slices.Contains([]string{"save", "list", "show", "delete"}, sub) {
		if err := templatesDirFault(env); err != nil {
			return err
		}
	}
	switch sub {
	case "save":
		return templateSave(env, rest)
	case "list":
		if _, err := parseFlags(newFlagSet("template list"), rest, 0); err != nil {
			return err
		}
		return templateList(env)
	case "show", "delete":
		return templateShowDelete(env, sub, rest)
	case "-h", "-help", "--help":
		return errHelp
	}
	if strings.HasPrefix(sub, "-") {
		return usagef("unknown flag %s", sub)
	}
	msg := fmt.Sprintf("unknown subcommand %q: want save, list, show or delete", sub)
	if s := closestName(sub, []string{"save", "list", "show", "delete"}); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return usagef("%s", msg)
}

func templateSave(env *cliEnv, args []string) error {
	fs := newFlagSet("template save")
	global := fs.Bool("global", false, "")
	force := fs.Bool("f", false, "")
	fs.BoolVar(force, "force", false, "")
	pos, err := parseFlags(fs, args, 2)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("missing workspace or template name: claude-iterate template save <workspace> <name>")
	}
	if err := checkName(pos[1]); err != nil {
		return usagef("invalid template name %q: %v", pos[1], strings.TrimPrefix(err.Error(), "invalid workspace name "+fmt.Sprintf("%q", pos[1])+": "))
	}
	w, err := workspaceFromArgsWith(env, pos[:1], needSettings(lookUpWorkspace)) // its mode and config go into the template
	if err != nil {
		return err
	}
	data, err := readRegularFile(w.instructionsPath(), maxHeadFileSize)
	if err != nil {
		return fmt.Errorf("reading %s: %w", relPath(env.projectRoot, w.instructionsPath()), unwrapPathError(err))
	}
	project, user := templateDirs(env)
	base := project
	if *global {
		if user == "" {
			return errors.New("no user config directory: $HOME and $XDG_CONFIG_HOME are unset")
		}
		base = user
	}
	cfg, leftOut := w.meta.Config, false
	if !*global {
		cfg, leftOut = withoutSecrets(cfg)
	}
	t := &savedTemplate{Name: pos[1], Dir: filepath.Join(base, pos[1]), Global: *global, Mode: w.meta.Mode,
		Config: cfg, From: w.Name, Saved: time.Now().UTC().Truncate(time.Second), instructions: string(data)}
	shown := relPath(env.projectRoot, t.Dir)
	if _, err := os.Lstat(t.Dir); err == nil && !*force {
		return withHint(fmt.Errorf("template %s already exists (%s)", t.Name, shown), "replace it with: claude-iterate template save %s %s -f", shellQuote(pos[0]), t.Name)
	}
	if err := t.write(); err != nil {
		return fmt.Errorf("saving template %s: %w", t.Name, err)
	}
	fmt.Fprintf(env.stdout, "Saved workspace %s as template %s (%s)\n", w.Name, t.Name, shown)
	if leftOut {
		fmt.Fprintf(env.stdout, "Left notifyUrl out: it holds credentials, and a project template can go into git; a workspace made from it has none (set it with: claude-iterate config set notifyUrl URL --workspace <workspace>; or save the template with --global)\n")
	}
	fmt.Fprintf(env.stdout, "Use it with: claude-iterate init <workspace> --template %s\n", t.Name)
	return nil
}

func templateList(env *cliEnv) error {
	project, user := templateDirs(env)
	var all []*savedTemplate
	for _, d := range []string{project, user} {
		if d == "" {
			continue
		}
		entries, err := readDir(d)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("reading %s: %w", d, unwrapPathError(err))
		}
		for _, e := range entries {
			if !e.IsDir() || !validName(e.Name()) {
				continue
			}
			t, err := loadTemplate(filepath.Join(d, e.Name()), d == user)
			if err != nil {
				fmt.Fprintf(env.stderr, "%s: warning: %v\n", progName, err)
				continue
			}
			all = append(all, t)
		}
	}
	if len(all) == 0 {
		fmt.Fprintf(env.stdout, "No templates (in %s or %s).\n", relPath(env.projectRoot, project), user)
		fmt.Fprintf(env.stdout, "Save one with: claude-iterate template save <workspace> <name>\n")
		return nil
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	rows := make([][]string, len(all))
	for i, t := range all {
		rows[i] = []string{t.Name, t.scope(), t.Mode, sanitizeString(clipWidth(t.firstLine(), 60))}
	}
	// A narrow terminal keeps the name whole and the task cut short.
	return writeError(writeTable(env.stdout, []string{"NAME", "SCOPE", "MODE", "TASK"}, rows, []int{prioKeep, 3, 2, 5}, 3))
}

func templateShowDelete(env *cliEnv, sub string, args []string) error {
	fs := newFlagSet("template " + sub)
	global := fs.Bool("global", false, "")
	var force *bool
	if sub == "delete" {
		force = fs.Bool("f", false, "")
		fs.BoolVar(force, "force", false, "")
	}
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("missing template name")
	}
	t, err := findTemplate(env, pos[0], *global)
	if err != nil {
		return err
	}
	shown := relPath(env.projectRoot, t.Dir)
	if sub == "show" {
		out := &errWriter{w: env.stdout}
		fmt.Fprintf(out, "Template:  %s (%s, %s)\n", t.Name, t.scope(), shown)
		fmt.Fprintf(out, "Mode:      %s\n", t.Mode)
		if t.From != "" {
			fmt.Fprintf(out, "Saved:     from workspace %s, %s\n", sanitizeString(t.From), t.Saved.Local().Format(time.DateTime))
		}
		if len(t.Config) > 0 {
			b, _ := json.Marshal(redactedConfig(t.Config))
			fmt.Fprintf(out, "Config:    %s\n", b)
		}
		fmt.Fprintf(out, "\n%s", sanitizeString(t.instructions))
		return writeError(out.err)
	}
	if !*force {
		yes, err := confirm(env, fmt.Sprintf("Delete template %s (%s)? [y/N] ", t.Name, shown))
		if err != nil {
			return failUsage(env, fmt.Errorf("not deleting template %s without confirmation: %v", t.Name, err), "to delete it without a question: claude-iterate template delete %s -f", t.Name)
		}
		if !yes {
			fmt.Fprintf(env.stdout, "Template %s was not deleted\n", t.Name)
			return nil
		}
	}
	if err := os.RemoveAll(t.Dir); err != nil {
		return fmt.Errorf("deleting %s: %w", shown, unwrapPathError(err))
	}
	fmt.Fprintf(env.stdout, "Deleted template %s (%s)\n", t.Name, shown)
	return nil
}
