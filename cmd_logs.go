package main

// This file implements the logs command: a workspace's run logs. The rules
// are: it only reads, through the safe reader, so it never disturbs a run;
// runs are numbered as 'history' numbers them (1 the first, -1 the last),
// in the order of their logs' names (the run's start time); on a terminal
// the log's text is sanitized (the log keeps the agent's raw bytes, which
// must not drive the terminal), elsewhere it is copied byte for byte; -f
// follows the log of a run in progress until the run ends, or Ctrl+C.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// logsUsage is the manual of the logs command.
const logsUsage = `Usage: claude-iterate logs [<workspace>] [-f] [--run N] [--list]

Prints the log of a workspace's last run: the prompt, the agent's
transcript, every stop request, signal and warning, and how the run ended.
Without <workspace>, the ralph-mode run of the project directory. With no
real run going on, a dry run of the workspace going on ('run --dry-run') is
the last run: its log, in its scratch copy, is shown, and said to be.

Options:
  -f, --follow   follow the log of a run in progress until it ends
                 (Ctrl+C stops following, not the run; exit 1 when
                 the run ends without saying how: killed, or crashed)
  --run N        the Nth run's log (1 is the first, -1 the last)
  --list         list the logs, numbered, instead

On a terminal, control characters and escape sequences of the agent's text
are written out, never executed; in a pipe or a file, the log is copied as
it is. A log over 16 MiB is shown from its last 1 MiB (with -f too), with
a note on standard error naming its size and file.

Exit status: 0 printed (-f: the run ended); 1 error (no such workspace,
no log); 2 usage error; 130 after Ctrl+C.

Examples:
  claude-iterate logs demo
  claude-iterate logs demo -f
  claude-iterate logs demo --run 1 | less
`

// logsCap is the largest log logs shows whole; of a larger one (the
// tool's own logs stay well below, but a run may log up to logBudget, and
// an agent may put anything at a log's name) it shows the last logsTail.
const (
	logsCap  = 16 << 20
	logsTail = 1 << 20
)

// logsLineSeek bounds how far past its cut a larger log's tail looks for
// the start of a line.
const logsLineSeek = 64 << 10

// tailStart is where the tail of f shown from about off starts: the line
// that starts after off, if one does within logsLineSeek; off otherwise.
func tailStart(f *os.File, off int64) int64 {
	buf := make([]byte, logsLineSeek)
	n, _ := f.ReadAt(buf, off)
	if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
		return off + int64(i) + 1
	}
	return off
}

// logsPoll is how often logs -f looks for more.
const logsPoll = 200 * time.Millisecond

func runLogs(env *cliEnv, args []string) error {
	fs := newFlagSet("logs")
	follow := fs.Bool("f", false, "")
	fs.BoolVar(follow, "follow", false, "")
	var which stringFlag
	fs.Var(&which, "run", "")
	list := fs.Bool("list", false, "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if err := which.notBlank("--run"); err != nil {
		return err
	}
	if *follow && which.set {
		return usagef("-f follows the run in progress; it does not go with --run")
	}
	w, err := lookUpFromArgs(env, pos)
	var dry []runEntry
	if err != nil {
		if w, dry, err = orRalphDryRun(env, pos, err); err != nil {
			return err
		}
	}
	if !which.set && !*list {
		if w, err = dryRunLogs(env, w, pos, dry); err != nil {
			return err
		}
	}
	logs, err := workspaceLogs(w)
	if fi, lerr := os.Lstat(w.logsPath()); err != nil && lerr == nil && !fi.IsDir() {
		shown := relPath(env.projectRoot, w.logsPath())
		return withHint(fmt.Errorf("%s is %s, not a directory: the runs since it is there have no log", shown, fileKind(fi)), "%s removes it; the next run makes the directory", removeCommand(w.logsPath(), shown))
	}
	if err != nil {
		return err
	}
	arg := strings.Join(pos, "")
	if *list {
		if width := outputWidth(env.stdout); width > 0 && len(logs) > 0 && logListWidth(env, logs) > width {
			return listLogsNarrow(env, logs, width)
		}
		for i, l := range logs {
			fmt.Fprintf(env.stdout, "%3d  %s\n", i+1, sanitizeString(relPath(env.projectRoot, l)))
		}
		return nil
	}
	if last := lastLog(w); !which.set && last != "" && filepath.Dir(last) == filepath.Clean(w.logsPath()) && !slices.Contains(logs, last) {
		if _, lerr := os.Lstat(last); errors.Is(lerr, os.ErrNotExist) {
			return withHint(fmt.Errorf("the last run's log %s is missing (removed during or after the run)", relPath(env.projectRoot, last)), "%s lists the logs there", strings.TrimSpace("claude-iterate logs "+shellQuote(arg)+" --list"))
		}
	}
	if len(logs) == 0 {
		return withHint(fmt.Errorf("workspace %s has no run log yet (none in %s)", w.Name, relPath(env.projectRoot, w.logsPath())), "start a run: %s", strings.TrimSpace("claude-iterate run "+shellQuote(arg)))
	}
	path := logs[len(logs)-1]
	if which.set {
		if path, err = pickLog(logs, which.s); err != nil {
			return err
		}
	}
	out := logWriter(env.stdout)
	f, fi, err := openOwnFile(path) // a link there is not the run's log
	shown := relPath(env.projectRoot, path)
	if err != nil {
		err = fmt.Errorf("reading %s: %w", shown, unwrapPathError(err))
		if hint := fileFaultHint(path, shown, err); hint != "" {
			return withHint(err, "it is no run's log: %s", hint)
		}
		return err
	}
	if fi.Size() > logsCap {
		// Not gigabytes to a screen or a pipe (tryout8 A: a minute of
		// blank screen): its end, said.
		start := tailStart(f, fi.Size()-logsTail)
		if _, err := f.Seek(start, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("reading %s: %w", shown, unwrapPathError(err))
		}
		fmt.Fprintf(env.stderr, "%s: %s is %s, over %s: showing its last %s (less %s shows all of it)\n", progName, sanitizeString(shown), byteSize(fi.Size()), sizeText(logsCap), byteSize(fi.Size()-start), sanitizeString(shellQuote(shown)))
	}
	r := bufio.NewReaderSize(f, 64<<10)
	if !*follow {
		defer f.Close()
		_, err := io.Copy(out, r)
		return writeError(errors.Join(err, out.finish()))
	}
	return followLog(env, w, followed{f, path, r}, out)
}

// followed is the log logs -f reads: its file, path and reader.
type followed struct {
	f    *os.File
	path string
	r    *bufio.Reader
}

// next moves on to where the run writes the rest of its log when the
// agent removed or replaced the file followed (logfile.go's stillThere):
// a new file the run made at its path (restOfLog), or a newer log beside
// it. It reports whether it
// moved.
func (l *followed) next(w *workspace) bool {
	try := func(path string) bool {
		f, _, err := openOwnFile(path)
		if err != nil {
			return false
		}
		l.f.Close()
		l.f, l.path = f, path
		l.r.Reset(f)
		return true
	}
	if !heldAt(l.f, l.path) && restOfLog(l.path) && try(l.path) {
		return true
	}
	logs, _ := workspaceLogs(w)
	if n := len(logs); n > 0 && strings.TrimSuffix(logs[n-1], ".log") > strings.TrimSuffix(l.path, ".log") {
		return try(logs[n-1])
	}
	return false
}

// restOfLog reports whether the file at path is the rest of a log the
// run made anew there: it starts by saying so (logfile.go's stillThere).
// Another file put at the log's name (the agent's) is not followed: the
// run writes the rest beside it, which next finds then.
func restOfLog(path string) bool {
	f, _, err := openOwnFile(path)
	if err != nil {
		return false
	}
	defer f.Close()
	want := []byte("[the log ")
	got := make([]byte, len(want))
	n, _ := io.ReadFull(f, got)
	return bytes.Equal(got[:n], want)
}

// dryRunLogs returns the workspace whose last log logs shows: w's, or,
// with no real run of w going on, its dry run's going on (dry, or found),
// said on stderr.
func dryRunLogs(env *cliEnv, w *workspace, pos []string, dry []runEntry) (*workspace, error) {
	if dry == nil {
		dry = dryRunOnly(w)
	}
	if len(dry) == 0 {
		return w, nil
	}
	e := dry[len(dry)-1]
	d, err := dryRunWorkspace(e)
	if err != nil {
		return nil, err
	}
	own := "the workspace has no log of its own yet"
	if logs, _ := workspaceLogs(w); len(logs) > 0 {
		own = fmt.Sprintf("'%s --run -1' shows the workspace's last one", strings.TrimSpace("claude-iterate logs "+shellQuote(strings.Join(pos, ""))))
	}
	fmt.Fprintf(env.stderr, "%s: the log of the dry run in progress (pid %d), %s; %s\n", progName, e.PID, scratchOf(e), own)
	return d, nil
}

// workspaceLogs returns the workspace's run logs, oldest first.
func workspaceLogs(w *workspace) ([]string, error) {
	entries, err := readDir(w.logsPath())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", w.logsPath(), unwrapPathError(err))
	}
	var logs []string
	for _, e := range entries {
		// Any kind: a link or a FIFO in place of a log is named when shown.
		if strings.HasPrefix(e.Name(), "iterate-") && strings.HasSuffix(e.Name(), ".log") {
			logs = append(logs, filepath.Join(w.logsPath(), e.Name()))
		}
	}
	// iterate-20250101-120000.log sorts before iterate-20250101-120000-2.log.
	sort.Slice(logs, func(i, j int) bool {
		return strings.TrimSuffix(logs[i], ".log") < strings.TrimSuffix(logs[j], ".log")
	})
	return logs, nil
}

// lastLog is the last run's log as w's metadata names it, or "".
func lastLog(w *workspace) string {
	if w.meta == nil {
		return ""
	}
	return w.meta.LastLog
}

// pickLog returns the log of run sel: 1 the first, -1 the last.
func pickLog(logs []string, sel string) (string, error) {
	n, err := strconv.Atoi(sel)
	if err != nil || n == 0 {
		return "", usagef("invalid value %q for flag --run: want a run number (1 the first, -1 the last)", sel)
	}
	switch {
	case n > 0 && n <= len(logs):
		return logs[n-1], nil
	case n < 0 && -n <= len(logs):
		return logs[len(logs)+n], nil
	}
	return "", withHint(fmt.Errorf("no run %d: there %s", n, map[bool]string{true: "is 1 run log", false: fmt.Sprintf("are %d run logs", len(logs))}[len(logs) == 1]), "use 1 to %d, or -1 for the last", len(logs))
}

// followLog copies the log to out as it grows, until the run that writes
// it ends (or none is in progress) and nothing more comes, or a signal; a
// log the agent replaced is followed into the file the rest goes to.
func followLog(env *cliEnv, w *workspace, l followed, out *logOut) error {
	defer func() { l.f.Close() }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	tick := time.NewTicker(logsPoll)
	defer tick.Stop()
	pid := w.runningPID() // the run followed, if one is going on
	var tail logTail      // the end of what was copied
	for {
		running := w.runningPID() != 0
		if _, err := io.Copy(io.MultiWriter(out, &tail), l.r); err != nil {
			return writeError(err)
		}
		if err := out.Flush(); err != nil {
			return writeError(err)
		}
		if l.next(w) {
			continue
		}
		if !running {
			// What it wrote before it ended was copied above.
			if err := out.finish(); err != nil {
				return writeError(err)
			}
			if pid != 0 && !tail.ended() && !endedSaying(w.statePath(), pid) {
				// As watch says it: a run killed (kill -9) or crashed
				// wrote no ending.
				return fmt.Errorf("the run (pid %d) ended without saying how: killed, or it crashed", pid)
			}
			return nil
		}
		select {
		case sig := <-sigs:
			out.Flush()
			fmt.Fprintf(env.stderr, "Stopped following; the run goes on.\n")
			return &exitCodeError{code: exitCodeFor(sig)}
		case <-tick.C:
		}
	}
}

// logTail keeps the end of what is written to it: a followed log's.
type logTail struct{ b []byte }

func (t *logTail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = append(t.b[:0], t.b[len(t.b)-1024:]...)
	}
	return len(p), nil
}

// ended reports whether the log ends with its RUN ENDED section: the run
// said how it ended (a dry run's state file goes with its scratch copy).
func (t *logTail) ended() bool {
	return bytes.Contains(t.b, []byte(logRule+"\nRUN ENDED\n"))
}

// endedSaying reports whether the run of pid wrote its ending in its
// state file, state.
func endedSaying(state string, pid int) bool {
	st, err := readRunState(state)
	return err == nil && st.PID == pid && st.Ended
}

// logOut writes a log to the screen or a file: sanitized line by line on
// a terminal, as it is elsewhere.
type logOut struct {
	w       *bufio.Writer
	screen  bool
	partial []byte // a line not ended yet (screen only)
}

func logWriter(w io.Writer) *logOut {
	f, ok := w.(*os.File)
	return &logOut{w: bufio.NewWriter(w), screen: ok && isTerminal(f)}
}

func (o *logOut) Write(p []byte) (int, error) {
	if !o.screen {
		return o.w.Write(p)
	}
	n := len(p)
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		if _, err := o.w.Write(sanitize(o.partial[:i+1])); err != nil {
			return 0, err
		}
		o.partial = o.partial[i+1:]
	}
	// A line without end (a run of NULs, a file the agent put there) is
	// written in pieces, at a character's edge: never held whole.
	if len(o.partial) > logsLineMax {
		cut := runeEdge(o.partial)
		if _, err := o.w.Write(sanitize(o.partial[:cut])); err != nil {
			return 0, err
		}
		o.partial = append(o.partial[:0], o.partial[cut:]...)
	}
	return n, nil
}

// logsLineMax is the most of a line logs holds back on a screen, waiting
// for its end.
const logsLineMax = 64 << 10

// runeEdge is len(p) less an incomplete UTF-8 character at its end.
func runeEdge(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return i
			}
			break
		}
	}
	return len(p)
}

// Flush writes what is buffered but a line not ended yet, which a follow
// may see the rest of later.
func (o *logOut) Flush() error {
	return o.w.Flush()
}

// finish writes everything, a line not ended included.
func (o *logOut) finish() error {
	if len(o.partial) > 0 {
		o.w.Write(sanitize(o.partial))
		o.partial = nil
	}
	return o.w.Flush()
}

// logListWidth is the width of the widest line of 'logs --list'.
func logListWidth(env *cliEnv, logs []string) int {
	w := 0
	for _, l := range logs {
		w = max(w, 5+displayWidth(sanitizeString(relPath(env.projectRoot, l))))
	}
	return w
}

// listLogsNarrow is 'logs --list' for an output narrower than its paths:
// the logs' directory once (wrapped at a slash), then each log's number
// and file name, so no line spills onto the next.
func listLogsNarrow(env *cliEnv, logs []string, width int) error {
	dir := sanitizeString(relPath(env.projectRoot, filepath.Dir(logs[0])))
	for i, line := range wrapWidth("Logs in "+dir+"/:", width, width-2, 0) {
		fmt.Fprintln(env.stdout, strings.Repeat("  ", min(i, 1))+line)
	}
	for i, l := range logs {
		fmt.Fprintf(env.stdout, "%3d  %s\n", i+1, sanitizeString(clipWidth(filepath.Base(l), width-5)))
	}
	return nil
}
