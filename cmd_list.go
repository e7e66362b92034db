package main

// This file implements the list command: a read-only view of the
// project's workspaces. A corrupt workspace is reported (file, position,
// fault) without hiding the others.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// listUsage is the manual of the list command.
const listUsage = `Usage: claude-iterate list [--archived] [--json]

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

On a terminal (or with $COLUMNS) the table fits the width: the least
useful columns go first, the status is cut short with "…"; a pipe gets
every column.

Options:
  --archived   also list the workspaces archived by 'claude-iterate clean'
  --json       a JSON array, one object per workspace: name, path, mode,
               agent, status, running, pid, iterations, progress
               ({"completed", "total"} or null), claim, questionWaits,
               created, lastRun (or null), git, leftovers; with
               --archived, the archived ones follow, with archived (when)
               and archive (its file)

Exit status: 0 listed; 1 error, or a workspace whose metadata cannot be
read (the others' table is still printed, that one named on stderr); 2 usage error.

Examples:
  claude-iterate list
  claude-iterate list --archived
  claude-iterate list --json
`

func runList(env *cliEnv, args []string) error {
	fs := newFlagSet("list")
	archived := fs.Bool("archived", false, "")
	asJSON := fs.Bool("json", false, "")
	if _, err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	if *asJSON {
		return listJSON(env, *archived)
	}
	err := listWorkspaces(env)
	if *archived {
		if aerr := listArchives(env, true); err == nil {
			err = aerr
		}
	}
	return err
}

// listHeader is list's table header; listPriorities say which columns a
// narrow terminal keeps: the higher, the later dropped (BRANCH: 4).
var (
	listHeader     = []string{"NAME", "MODE", "STATUS", "ITERATIONS", "PROGRESS", "LAST RUN"}
	listPriorities = []int{prioKeep, 2, 8, 5, 6, 3}
)

// writeTable prints a table: to a terminal or with $COLUMNS (outputWidth),
// fitted to its width, the lowest-priority columns dropped and the flex
// one cut short with "…" (fitColumns), rather than wrapped; to a pipe or
// a file, every column whole.
func writeTable(out io.Writer, header []string, rows [][]string, prio []int, flex int) error {
	if width := outputWidth(out); width > 0 {
		head, lines := fitColumns(header, rows, prio, width, flex)
		_, err := fmt.Fprintln(out, strings.Join(append([]string{head}, lines...), "\n"))
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// listWorkspaces prints the workspaces.
func listWorkspaces(env *cliEnv) error {
	spaces, dir, broken, err := readWorkspaces(env)
	if err != nil {
		return err
	}
	if len(spaces) == 0 && len(broken) == 0 {
		fmt.Fprintf(env.stdout, "No workspaces in %s.\n", relPath(env.projectRoot, dir))
		fmt.Fprintf(env.stdout, "Create one with: claude-iterate init <name> --instructions TASK.md\n")
		fmt.Fprintf(env.stdout, "Workspaces made at a path (init ./dir) are not listed: claude-iterate status ./dir shows one.\n")
		return nil
	}
	if len(spaces) > 0 {
		if err := writeWorkspaces(env, spaces); err != nil {
			return writeError(err)
		}
	}
	return reportBroken(env, broken)
}

// reportBroken says what is wrong with each workspace that could not be
// read, on stderr, and then fails.
func reportBroken(env *cliEnv, broken []error) error {
	for _, err := range broken {
		fmt.Fprintf(env.stderr, "%s: %s\n", progName, sanitizeString(err.Error()))
	}
	if len(broken) > 0 {
		return &exitCodeError{code: exitError}
	}
	return nil
}

// readWorkspaces reads the workspaces under the workspaces directory (dir,
// absolute) and the ralph-mode run's, named ".", sorted by name; broken
// are the ones that could not be read.
func readWorkspaces(env *cliEnv) (spaces []*workspace, dir string, broken []error, err error) {
	dir, warn := workspacesDirLenient(env)
	warnConfig(env, warn)
	if err := workspacesDirUsable(env.projectRoot, dir); err != nil {
		return nil, "", nil, err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.projectRoot, dir)
	}
	entries, err := readDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", nil, fmt.Errorf("reading workspaces directory: %w", err)
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 && validName(e.Name()) {
			w := &workspace{Name: e.Name(), Dir: filepath.Join(dir, e.Name())}
			w.StateDir = w.Dir
			if err := linkedWorkspace(env, w); err != nil {
				broken = append(broken, err) // said, not hidden
			}
			continue
		}
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
		warnSettings(env, w)
		spaces = append(spaces, w)
	}
	if rw := ralphWorkspace(env.projectRoot); rw.load() == nil {
		rw.Name = "."
		spaces = append(spaces, rw)
	}
	sort.Slice(spaces, func(i, j int) bool { return spaces[i].Name < spaces[j].Name })
	return spaces, dir, broken, nil
}

// writeWorkspaces prints list's table of spaces.
func writeWorkspaces(env *cliEnv, spaces []*workspace) error {
	views, branches := make([]*gitView, len(spaces)), false
	for i, w := range spaces {
		if views[i] = viewGit(env, w); views[i] != nil {
			branches = true // gitstate.go: only when a workspace has one
		}
	}
	header, prio := listHeader, listPriorities
	if branches {
		header, prio = append(header[:len(header):len(header)], "BRANCH"), append(prio[:len(prio):len(prio)], 4)
	}
	rows := make([][]string, len(spaces))
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
		rows[i] = []string{w.Name, mode, status, strconv.Itoa(w.meta.Iterations), progressCell(w, ts), last}
		if branches {
			branch := "-"
			if views[i] != nil {
				branch = sanitizeString(views[i].short())
			}
			rows[i] = append(rows[i], branch)
		}
	}
	return writeTable(env.stdout, header, rows, prio, 2)
}
