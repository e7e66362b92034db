package main

// This file implements the list command: a read-only view of the
// project's workspaces. A corrupt workspace is reported (file, position,
// fault) without hiding the others.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
)

// listUsage is the manual of the list command.
const listUsage = `Usage: claude-iterate list [--archived]

Lists the workspaces under the workspaces directory (claude-iterate/workspaces
by default, see 'claude-iterate config'), and a ralph-mode run's state in the
project root, named "." (the other commands take "." for it, or no
workspace), with mode, status, iterations run, progress and last run.
A workspace made at a path (init ./dir) is not listed: the tool keeps no
record of them; 'claude-iterate status ./dir' shows one.
A status of "ended abnormally" is a run that ended without cleaning up
(killed with SIGKILL, or a crash); ", question waits" marks a workspace whose agent asked
a question not answered yet ('claude-iterate answer'). When a workspace
works in a git worktree (run --worktree), a BRANCH column shows its branch,
+commits ahead of and -behind its base, ~files uncommitted, and "merged".
", 2 processes left running" marks a killed run whose agent's processes
still run: 'claude-iterate stop <workspace>' ends them.

Options:
  --archived   also list the workspaces archived by 'claude-iterate clean'

Examples:
  claude-iterate list
  claude-iterate list --archived
`

func runList(env *cliEnv, args []string) error {
	fs := newFlagSet("list")
	archived := fs.Bool("archived", false, "")
	if _, err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	err := listWorkspaces(env)
	if *archived {
		if aerr := listArchives(env, true); err == nil {
			err = aerr
		}
	}
	return err
}

// listWorkspaces prints the workspaces.
func listWorkspaces(env *cliEnv) error {
	dir, warn := workspacesDirLenient(env)
	warnConfig(env, warn)
	if err := workspacesDirUsable(env.projectRoot, dir); err != nil {
		return err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.projectRoot, dir)
	}
	entries, err := readDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading workspaces directory: %w", err)
	}
	var spaces []*workspace
	var broken []error
	for _, e := range entries {
		if !e.IsDir() || !validName(e.Name()) {
			continue
		}
		w := &workspace{Name: e.Name(), Dir: filepath.Join(dir, e.Name())}
		w.StateDir = w.Dir
		if err := lookWorkspace(w); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				broken = append(broken, err)
			}
			continue
		}
		spaces = append(spaces, w)
	}
	if rw := ralphWorkspace(env.projectRoot); rw.load() == nil {
		rw.Name = "."
		spaces = append(spaces, rw)
	}
	sort.Slice(spaces, func(i, j int) bool { return spaces[i].Name < spaces[j].Name })
	if len(spaces) == 0 && len(broken) == 0 {
		fmt.Fprintf(env.stdout, "No workspaces in %s.\n", relPath(env.projectRoot, dir))
		fmt.Fprintf(env.stdout, "Create one with: claude-iterate init <name> --instructions TASK.md\n")
		fmt.Fprintf(env.stdout, "Workspaces made at a path (init ./dir) are not listed: claude-iterate status ./dir shows one.\n")
		return nil
	}
	if len(spaces) > 0 {
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		views, branches := make([]*gitView, len(spaces)), ""
		for i, w := range spaces {
			if views[i] = viewGit(env, w); views[i] != nil {
				branches = "\tBRANCH" // gitstate.go: only when a workspace has one
			}
		}
		fmt.Fprintln(tw, "NAME\tMODE\tSTATUS\tITERATIONS\tPROGRESS\tLAST RUN"+branches)
		for i, w := range spaces {
			ts, _ := readTaskStatus(w)
			last := "never"
			if w.meta.LastRun != nil {
				last = w.meta.LastRun.Local().Format("2006-01-02 15:04")
			}
			status := sanitizeString(w.displayStatus()) // the metadata's word: an agent can write it
			if w.questionWaits() {
				status += ", question waits"
			}
			if w.displayStatus() == statusKilled { // one look through the processes, only then
				if left := leftPIDs(w); len(left) > 0 {
					status += ", " + processesText(len(left)) + " left running"
				}
			}
			mode := w.meta.Mode
			if a := w.meta.LastAgent; a != "" && a != agentClaude {
				mode += ", " + a // the agent, when not the default
			}
			branch := ""
			if branches != "" {
				branch = "\t-"
				if views[i] != nil {
					branch = "\t" + sanitizeString(views[i].short())
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s%s\n", w.Name, mode, status, w.meta.Iterations, progressCell(w, ts), last, branch)
		}
		if err := tw.Flush(); err != nil {
			return writeError(err)
		}
	}
	for _, err := range broken {
		fmt.Fprintf(env.stderr, "%s: %v\n", progName, err)
	}
	if len(broken) > 0 {
		return &exitCodeError{code: exitError}
	}
	return nil
}
