package main

// This file implements the pr command: a workspace's branch pushed, and a
// pull request opened with gh. The rules are: the push names the branch on
// both sides and sets no upstream (the repository's configuration is not
// changed); gh opens the pull request only when it is installed and logged
// in; otherwise the command prints what it pushed and the command (and, for
// a GitHub remote, the URL) that opens the pull request — never a silent
// success.

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// prUsage is the manual of the pr command.
const prUsage = `Usage: claude-iterate pr <workspace> [--remote NAME] [--draft]

Pushes the branch of a workspace that runs in a git worktree (run
--worktree) to the remote (origin by default), then opens a pull request
into the branch the worktree was made from with gh, GitHub's command line,
when it is installed and logged in: its title is the task's first line, its
body the workspace's history table. Without gh, or not logged in, it prints
the push it made and the gh command (and, for a GitHub remote, the URL)
that opens the pull request. The repository's configuration is not changed
(no upstream is set). It refuses while a run of the workspace is going on
(the run may commit to the branch while it is pushed): wait for the run to
end, or stop it ('claude-iterate stop <workspace>'), then pr again. A
branch with no commit that its base lacks (merged already) is not pushed:
it says so, exit 0.

Options:
  --remote NAME   the remote to push to (default origin)
  --draft         open the pull request as a draft

Exit status: 0 pushed and opened; 1 error (git or gh failed, gh missing);
2 usage error.

Examples:
  claude-iterate pr api-migration
  claude-iterate pr api-migration --remote fork --draft
`

// runPR is the pr command.
func runPR(env *cliEnv, args []string) error {
	fs := newFlagSet("pr")
	remote := stringFlag{s: "origin"}
	fs.Var(&remote, "remote", "")
	draft := fs.Bool("draft", false, "")
	arg, err := parseWorkspaceArg(fs, args, "workspace")
	if err != nil {
		return err
	}
	if remote.s == "" {
		return usagef("invalid value \"\" for flag --remote: empty")
	}
	w, st, g, release, err := openBranchWorkspace(env, arg, "pr")
	if err != nil {
		return err
	}
	release() // refused while a run holds it; a run started now may go on (a push does not change the workspace)
	if st.Base != "" {
		// A branch merged already (or with no work yet) has nothing
		// for a pull request: nothing is pushed. A base that cannot be
		// counted against (deleted since) is no reason not to push.
		if ahead, err := countCommits(g.top, st.Base, st.Branch); err == nil && ahead == 0 {
			fmt.Fprintf(env.stdout, "No pull request to open: %s has no commit that %s lacks (merged already, or no work yet); nothing was pushed\n", st.Branch, st.Base)
			return nil
		}
	}
	url, stderr, err := gitOut(g.top, nil, "remote", "get-url", "--", remote.s)
	if err != nil {
		return fmt.Errorf("the repository has no remote %s (%s): add one (git remote add %s URL), or name another with --remote", remote.s, gitFailure(stderr, err), remote.s)
	}
	ref := "refs/heads/" + st.Branch
	if _, stderr, err := gitOut(g.top, nil, "push", "-q", "--", remote.s, ref+":"+ref); err != nil {
		return fmt.Errorf("git push %s %s failed: %s; nothing was opened", remote.s, st.Branch, gitFailure(stderr, err))
	}
	fmt.Fprintf(env.stdout, "Pushed %s to %s (git push %s %s)\n", st.Branch, remote.s, remote.s, st.Branch)
	title := taskTitle(w)
	base := firstNonEmpty(st.Base, "main")
	ghArgs := []string{"pr", "create", "--base", base, "--head", st.Branch, "--title", title, "--body-file", "-"}
	if *draft {
		ghArgs = append(ghArgs, "--draft")
	}
	if why := ghReady(g.top); why != "" {
		fmt.Fprintf(env.stdout, "Not opening the pull request: %s. To open it:\n", why)
		fmt.Fprintf(env.stdout, "  %s | gh %s\n", wsCommand(w, "history"), shellJoin(ghArgs))
		if u := compareURL(url, base, st.Branch); u != "" {
			fmt.Fprintf(env.stdout, "  or open %s\n", u)
		}
		return nil
	}
	var body bytes.Buffer
	fmt.Fprintf(&body, "Work of the claude-iterate workspace %s (branch %s).\n\n```\n", w.Name, st.Branch)
	quiet := &cliEnv{stdin: env.stdin, stdout: &body, stderr: io.Discard, projectRoot: env.projectRoot, rootMarker: env.rootMarker}
	if err := runHistory(quiet, []string{arg}); err != nil {
		fmt.Fprintf(&body, "(no history: %v)\n", err)
	}
	body.WriteString("```\n")
	cmd := exec.Command("gh", ghArgs...)
	cmd.Dir, cmd.Stdin = g.top, &body
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := outputOwn(cmd)
	if err != nil {
		return fmt.Errorf("gh pr create failed: %s; the branch is pushed: open the pull request by hand (gh %s)", firstNonEmpty(lastLine(errOut.String()), err.Error()), shellJoin(ghArgs))
	}
	fmt.Fprintf(env.stdout, "Opened the pull request: %s\n", strings.TrimSpace(string(out)))
	return nil
}

// ghReady says why gh cannot open a pull request ("" when it can).
func ghReady(dir string) string {
	if _, err := exec.LookPath("gh"); err != nil {
		return "gh (GitHub's command line) is not installed"
	}
	cmd := exec.Command("gh", "auth", "status")
	cmd.Dir = dir
	if _, err := outputOwn(cmd); err != nil {
		return "gh is not logged in (gh auth login)"
	}
	return ""
}

// githubRemote matches a GitHub remote URL's owner and repository.
var githubRemote = lazyRegexp(`github\.com[:/]([^/]+)/([^/]+?)(?:\.git)?/?$`)

// compareURL is the page that opens a pull request of branch into base on
// a GitHub remote; "" for another remote.
func compareURL(remote, base, branch string) string {
	m := githubRemote().FindStringSubmatch(remote)
	if m == nil {
		return ""
	}
	return fmt.Sprintf("https://github.com/%s/%s/compare/%s...%s?expand=1", m[1], m[2], base, branch)
}

// shellJoin quotes args for a shell.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
