package main

// This file implements workspaces and the project root. The rules are: the
// project root is found as git finds its repository (findProjectRoot); a
// workspace argument is a path (relative to the current directory) when it
// is ".", or starts with "/" or "./"; anything else is a name,
// which must be a validName and is resolved under workspacesDir — so "../x" and
// "a/b" are refused as names rather than quietly escaping the workspaces
// directory. init validates everything before it creates anything, never
// overwrites an existing workspace, and removes what it made if it fails
// half way (cmd_init.go). A corrupt .metadata.json is reported, never reset.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Modes.
const (
	modeLoop      = "loop"
	modeIterative = "iterative"
)

// validMode reports whether s names a mode.
func validMode(s string) bool { return s == modeLoop || s == modeIterative }

func defaultMaxIterationsFor(mode string) int {
	if mode == modeIterative {
		return 20
	}
	return 50
}

// Workspace statuses, as stored in .metadata.json.
const (
	statusNew         = "new"
	statusRunning     = "running"
	statusCompleted   = "completed"
	statusStopped     = "stopped"
	statusFailed      = "failed"
	statusInterrupted = "interrupted"
)

// File names inside a workspace.
const (
	instructionsFile = "INSTRUCTIONS.md"
	todoFile         = "TODO.md"
	statusFile       = ".status.json"
	metadataFile     = ".metadata.json"
	stopFile         = ".stop"
	logsDir          = "logs"
	// ralphStateDir holds the state files of a ralph-mode run, inside the
	// directory it runs in.
	ralphStateDir = ".claude-iterate"
)

// validName reports whether s is a workspace name: a letter or digit, then
// up to 63 letters, digits, '.', '_' or '-' (no slash, never "." or "..").
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// workspace is one task's directory.
type workspace struct {
	Name string
	// Dir holds the task files; StateDir the tool's files (.metadata.json,
	// .stop, logs/). They differ only in ralph mode.
	Dir, StateDir string
	Ralph         bool
	meta          *metadata
	// held is set once a run has made its state directory: a save never
	// makes it again (ensureStateDir), and the run ends if it is gone
	// (workspaceGone).
	held bool
	// warnReplaced, set by the run, says that a save put back the metadata
	// file the agent had replaced.
	warnReplaced func(msg string)
	// notHere is set for a workspace whose task files are here but whose
	// .metadata.json is not (a fresh clone): its metadata is fresh, in
	// memory only (loadOrFresh).
	notHere bool
	// stateID is the identity (dirIdentity) of the state directory the
	// run locked (acquireRunLock): a directory put at its path is another
	// workspace, which no save writes into and which ends the run.
	stateID string
	// arg is the argument that named it (a path, or the name), which the
	// commands suggested to the user repeat (wsCmdArg); "" when none did.
	arg string
	// unreadable is why its .metadata.json (or, without one, its settings
	// file) cannot be read, for clean, which removes it all the same with
	// fresh metadata (cleanTarget).
	unreadable error
}

func (w *workspace) metadataPath() string { return filepath.Join(w.StateDir, metadataFile) }

func (w *workspace) stopPath() string { return filepath.Join(w.StateDir, stopFile) }

func (w *workspace) historyPath() string { return filepath.Join(w.StateDir, historyFile) }

func (w *workspace) statePath() string { return filepath.Join(w.StateDir, runStateFile) }

func (w *workspace) logsPath() string { return filepath.Join(w.StateDir, logsDir) }

func (w *workspace) instructionsPath() string { return filepath.Join(w.Dir, instructionsFile) }

func (w *workspace) statusPath() string { return filepath.Join(w.StateDir, statusFile) }

func (w *workspace) todoPath() string {
	if w.Ralph {
		return "" // a ralph project's TODO.md is its own business
	}
	return filepath.Join(w.Dir, todoFile)
}

// metadata is .metadata.json.
type metadata struct {
	Name              string             `json:"name"`
	Mode              string             `json:"mode"`
	Created           time.Time          `json:"created"`
	LastRun           *time.Time         `json:"lastRun,omitempty"`
	Status            string             `json:"status"`
	workTotals                           // the sums of the workspace's iteration records
	LastRunIterations int                `json:"lastRunIterations"`
	LastStopReason    string             `json:"lastStopReason,omitempty"`
	LastExitCode      *int               `json:"lastExitCode,omitempty"`
	LastLog           string             `json:"lastLog,omitempty"` // the last run's log file
	PID               int                `json:"pid,omitempty"`
	Conditions        []condReport       `json:"conditions,omitempty"`
	Config            map[string]any     `json:"config,omitempty"`
	Question          *questionState     `json:"question,omitempty"`     // question.go
	Verification      *verificationState `json:"verification,omitempty"` // verify.go
	Git               *gitState          `json:"git,omitempty"`          // gitworktree.go

	configLayer *configLayer
	// hasSettings is set once the mode and config are those of the
	// settings file (workspacesettings.go).
	hasSettings bool
	// settingsErr is why the settings file cannot be read: the mode and
	// config are .metadata.json's copies, the file is never rewritten, and
	// a command that needs it refuses (settingsFault).
	settingsErr error
}

// condReport is one stop condition's last evaluation, for 'status'.
type condReport struct {
	Group     string  `json:"group"`
	Type      string  `json:"type"`
	Condition string  `json:"condition"` // in words
	Met       bool    `json:"met"`
	Progress  float64 `json:"progress"`
	Reason    string  `json:"reason"`
}

// isWorkspacePath reports whether arg names a directory rather than a
// workspace name.
func isWorkspacePath(arg string) bool {
	return arg == "." || strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, "./")
}

// checkName explains why name is not a valid workspace name.
func checkName(name string) error {
	if validName(name) {
		return nil
	}
	shown := fmt.Sprintf("%q", name)
	switch {
	case name == "":
		return usagef("workspace name is empty")
	case strings.IndexFunc(name, unicode.IsControl) >= 0 || !utf8.ValidString(name):
		return usagef("invalid workspace name %s: control characters are not allowed", shown)
	case len(name) > 64:
		return usagef("invalid workspace name %s: longer than 64 characters", shown)
	case strings.Contains(name, "/"):
		return usagef("invalid workspace name %s: a name cannot contain '/' (to give a directory, start it with ./ or /)", shown)
	}
	return usagef("invalid workspace name %s: use letters, digits, '.', '_' and '-', starting with a letter or digit", shown)
}

// branchNameFault says why a git branch cannot end in name (a component
// of claude-iterate/<name>), by git check-ref-format's rules for a
// component, "" when one can: no '..', no ending in '.lock' or '.', no
// leading '.', no "@{", no control character, space or any of ~^:?*[\.
func branchNameFault(name string) string {
	switch {
	case strings.Contains(name, ".."):
		return "it contains '..'"
	case strings.HasSuffix(name, ".lock"):
		return "it ends in '.lock'"
	case strings.HasSuffix(name, "."):
		return "it ends in '.'"
	case strings.HasPrefix(name, "."):
		return "it starts with '.'"
	case strings.Contains(name, "@{"):
		return "it contains '@{'"
	case strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) }) >= 0:
		return "it contains a space, a control character or one of ~^:?*[\\"
	}
	return ""
}

// locateNewWorkspace is locateWorkspace for a command that makes the
// workspace (init, a dry run's demo, archive restore): a name is refused
// also when its branch claude-iterate/<name> (run --worktree) could not be
// a git branch, so that every name made works with --worktree. A path's
// workspace is named by its directory, and only init --worktree refuses
// one (newWorktreeName).
func locateNewWorkspace(projectRoot, workspacesDir, arg string) (*workspace, error) {
	w, err := locateWorkspace(projectRoot, workspacesDir, arg)
	if err != nil {
		return nil, err
	}
	if err := checkNewName(arg); err != nil {
		return nil, err
	}
	return w, nil
}

// checkNewName refuses a new workspace's name (not a path) that git could
// not take in its branch claude-iterate/<name>.
func checkNewName(arg string) error {
	if isWorkspacePath(arg) {
		return nil
	}
	if why := branchNameFault(arg); why != "" {
		return usagef("invalid workspace name %q: %s, and its branch %s%s would not be a valid git branch name", arg, why, branchPrefix, arg)
	}
	return nil
}

// projectMarkers are what make a directory a project root, in the order
// they are looked for: the tool's directory (workspaces, archives), the
// project config, and the state of a ralph-mode run (and the project's
// prompt templates).
var projectMarkers = []string{"claude-iterate", projectConfigName, ralphStateDir}

// findProjectRoot finds the project root the way git finds its repository:
// the nearest directory from wd upwards that holds a claude-iterate/ or
// .claude-iterate/ directory or a .claude-iterate.json file. It returns that
// directory and the marker found there, or wd and "" when there is none.
// The user's config directory (~/.config/claude-iterate) marks nothing.
func findProjectRoot(wd string) (root, marker string) {
	userDir := filepath.Dir(userConfigPath())
	for d := wd; ; d = filepath.Dir(d) {
		for _, m := range projectMarkers {
			p := filepath.Join(d, m)
			fi, err := os.Stat(p)
			if err != nil || p == userDir {
				continue
			}
			if (m == projectConfigName) != fi.IsDir() {
				return d, m
			}
		}
		if filepath.Dir(d) == d {
			return wd, ""
		}
	}
}

// describeProjectRoot says which directory is the project root and why,
// for 'config'.
func describeProjectRoot(env *cliEnv) string {
	switch env.rootMarker {
	case "":
		return fmt.Sprintf("Project root: %s (the current directory: no claude-iterate/, %s or %s/ above it)", env.projectRoot, projectConfigName, ralphStateDir)
	case projectConfigName:
		return fmt.Sprintf("Project root: %s (it holds %s)", env.projectRoot, projectConfigName)
	}
	return fmt.Sprintf("Project root: %s (it holds %s/)", env.projectRoot, env.rootMarker)
}

// locateWorkspace turns a workspace argument into a workspace, without reading
// anything. A path is relative to the current directory, a name to the
// workspaces directory under projectRoot.
func locateWorkspace(projectRoot, workspacesDir, arg string) (*workspace, error) {
	if strings.IndexFunc(arg, unicode.IsControl) >= 0 {
		return nil, usagef("invalid workspace %q: control characters are not allowed", arg)
	}
	if isWorkspacePath(arg) {
		dir, err := filepath.Abs(arg)
		if err != nil {
			return nil, fmt.Errorf("finding %s: %w", arg, err)
		}
		confineWrites(dir)
		return &workspace{Name: filepath.Base(dir), Dir: dir, StateDir: dir, arg: arg}, nil
	}
	if err := checkName(arg); err != nil {
		return nil, err
	}
	if err := workspacesDirUsable(projectRoot, workspacesDir); err != nil {
		return nil, err
	}
	base := workspacesDir
	if !filepath.IsAbs(base) {
		base = filepath.Join(projectRoot, base)
	}
	dir := filepath.Join(base, arg)
	confineWrites(dir)
	return &workspace{Name: arg, Dir: dir, StateDir: dir}, nil
}

// workspacesDirUsable refuses a workspaces directory under a path that is
// not a directory, naming it: in a clone, 'go build' writes the binary to
// ./claude-iterate, where the default workspaces directory goes.
func workspacesDirUsable(projectRoot, dir string) error {
	p := dir
	if !filepath.IsAbs(p) {
		p = filepath.Join(projectRoot, p)
	}
	for q := p; ; q = filepath.Dir(q) {
		fi, err := os.Stat(q)
		switch {
		case err == nil && fi.IsDir():
			return nil
		case err == nil:
			return withHint(fmt.Errorf("the workspaces directory %s cannot be made: %s is a file, not a directory", dir, q),
				"move %s out of the way (a binary built here? build it with 'go build -o ~/.local/bin/claude-iterate .'), or set workspacesDir (see 'help config')", q)
		case q == filepath.Dir(q):
			return nil
		}
	}
}

// ralphWorkspace is the workspace of a ralph-mode run in dir.
func ralphWorkspace(dir string) *workspace {
	confineWrites(dir)
	return &workspace{Name: filepath.Base(dir), Dir: dir, StateDir: filepath.Join(dir, ralphStateDir), Ralph: true}
}

// errNoWorkspace is a workspace that does not exist; near is the name of
// an existing one a typo away, if any.
type errNoWorkspace struct {
	arg, dir, near string
}

func (e *errNoWorkspace) Error() string {
	msg := fmt.Sprintf("workspace %q not found (no %s)", e.arg, filepath.Join(e.dir, metadataFile))
	if e.near != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.near)
	}
	return msg
}

// namedWorkspaces returns the names of the workspaces in workspacesDir:
// those with their metadata, and those with only their task files (a
// fresh clone's), which list shows and any command opens.
func namedWorkspaces(projectRoot, workspacesDir string) []string {
	dir := workspacesDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(projectRoot, dir)
	}
	return dirNames(dir, func(p string) bool {
		_, err := os.Lstat(filepath.Join(p, metadataFile))
		return err == nil || hasTaskFiles(&workspace{Dir: p, StateDir: p})
	})
}

// openWorkspace locates and loads an existing workspace, for a command
// that changes it: one that came without its runtime files is taken up
// (loadWorkspace).
func openWorkspace(env *cliEnv, workspacesDir, arg string) (*workspace, error) {
	return openWorkspaceKeep(env, workspacesDir, arg, true)
}

// openWorkspaceKeep is openWorkspace; a workspace it takes up is written
// only when keep is set (not by a dry run).
func openWorkspaceKeep(env *cliEnv, workspacesDir, arg string, keep bool) (*workspace, error) {
	return openWorkspaceWith(env, workspacesDir, arg, func(w *workspace) error { return loadWorkspace(env, w, keep) })
}

// lookUpWorkspace is openWorkspace for a command that only looks at the
// workspace: one that came without its runtime files is loaded in memory
// only, and nothing is written (lookWorkspace).
func lookUpWorkspace(env *cliEnv, workspacesDir, arg string) (*workspace, error) {
	return openWorkspaceWith(env, workspacesDir, arg, lookWorkspace)
}

// openWorkspaceWith locates the workspace arg names and loads it with
// load, explaining a workspace that does not exist.
func openWorkspaceWith(env *cliEnv, workspacesDir, arg string, load func(*workspace) error) (*workspace, error) {
	w, err := locateWorkspace(env.projectRoot, workspacesDir, arg)
	if err != nil {
		return nil, err
	}
	if err := linkedWorkspace(env, w); err != nil {
		return nil, err
	}
	if err := load(w); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			nw := &errNoWorkspace{arg: arg, dir: relPath(env.projectRoot, w.StateDir)}
			if !isWorkspacePath(arg) {
				nw.near = closestName(arg, namedWorkspaces(env.projectRoot, workspacesDir))
			}
			if arg == "." && hasRalphState(env) {
				// list's "." is the ralph-mode run: a command that does
				// not take it says how to reach it.
				return nil, withHint(nw, "\".\" is this project's ralph-mode run (%s): claude-iterate run --prompt FILE runs it; status, logs, history, stop and reset take it as \".\"", ralphStateDir+"/")
			}
			return nil, withHint(nw, "create it with: claude-iterate init %s", arg)
		}
		return nil, err
	}
	return w, nil
}

// metadataCap bounds .metadata.json.
const metadataCap = 16 << 20

// load reads .metadata.json, and the settings file, whose mode and config
// win over its copies; a settings file that cannot be read leaves them
// (m.settingsErr), for the caller to warn or refuse (settingsFault).
func (w *workspace) load() error {
	path := w.metadataPath()
	// The agent works in the workspace: the file may be anything.
	data, err := readRegularFile(path, metadataCap)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return err
		}
		return metadataFault(w, fmt.Errorf("reading %s: %w", path, unwrapPathError(err)))
	}
	m, err := parseMetadata(path, data)
	if err != nil {
		return metadataFault(w, err)
	}
	if !w.Ralph {
		switch s, err := readSettings(w); {
		case err == nil:
			if err := m.applySettings(s, settingsPath(w)); err != nil {
				m.settingsErr = err
			}
		case !errors.Is(err, os.ErrNotExist):
			m.settingsErr = err
		}
	}
	w.meta = m
	return nil
}

// parseMetadata parses and checks .metadata.json.
func parseMetadata(path string, data []byte) (*metadata, error) {
	doc, err := parseJSONObject(path, data)
	if err != nil {
		return nil, err
	}
	m := &metadata{}
	if err := decodeJSONFile(path, data, m); err != nil {
		return nil, err
	}
	if !validMode(m.Mode) {
		return nil, doc.errorAt(doc.Root.Obj["mode"], "mode", "want \"loop\" or \"iterative\", got %q", m.Mode)
	}
	m.configLayer = &configLayer{name: layerWorkspace, path: path, values: map[string]any{}}
	for k, v := range doc.Root.Obj {
		// encoding/json matches keys regardless of case: a "Config" would
		// be taken as the configuration without being checked below.
		if k != "config" && strings.EqualFold(k, "config") {
			return nil, doc.errorAt(v, k, "unknown key %q (did you mean \"config\"?)", k)
		}
	}
	if c, ok := doc.Root.Obj["config"]; ok && c.Kind != jsonNull {
		if c.Kind != jsonObject {
			return nil, doc.errorAt(c, "config", "want an object, got %s", c.Kind)
		}
		if err := parseConfigObject(doc, c, "", m.configLayer.values); err != nil {
			var fe *fileError
			if errors.As(err, &fe) && fe.Key != "" {
				fe.Key = "config." + fe.Key
			}
			return nil, err
		}
	}
	return m, nil
}

// save writes .metadata.json atomically.
func (w *workspace) save() error {
	return w.saveSync(true)
}

// metadataPerm is the permissions of .metadata.json: private, as its
// config may hold a secret (a notify URL's password).
const metadataPerm = 0o600

// saveSync writes .metadata.json, fsynced when durable is set, and the
// settings file of a workspace that has none yet.
func (w *workspace) saveSync(durable bool) error {
	if err := ensureStateDir(w); err != nil {
		return err
	}
	if !w.Ralph && !w.meta.hasSettings && w.meta.settingsErr == nil { // a broken one is the user's to fix
		if err := writeSettings(w); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(w.meta, "", "  ")
	if err != nil {
		return err
	}
	if !w.held {
		return writeFileAtomicSync(w.metadataPath(), append(data, '\n'), metadataPerm, durable)
	}
	// The run's own file: a link or a FIFO the agent put in its place is
	// replaced (tryout6 #6: left there, it broke status, list and the
	// next run), and the run says so.
	replaced, err := writeFileReplacing(w.metadataPath(), append(data, '\n'), metadataPerm, durable)
	if replaced != nil && w.warnReplaced != nil {
		w.warnReplaced(replacedMsg(w.metadataPath(), fmt.Sprintf("%v; written again in its place", unwrapPathError(replaced))))
	}
	return err
}

// runningPID returns the pid of a live run of this workspace, or 0.
func (w *workspace) runningPID() int {
	pid, held := lockHolder(w)
	if !held {
		return 0
	}
	if pid <= 0 && w.meta != nil {
		pid = w.meta.PID
	}
	return pid
}

// statusKilled is the status shown for a run that died without cleaning up
// (kill -9, a crash): its metadata still says running, but no run holds the
// workspace's lock.
const statusKilled = "ended abnormally"

// statusNotHere is the status shown for a workspace whose task files are
// here but whose runtime files are not (a fresh clone): its first run, or
// any command that changes it, takes it up.
const statusNotHere = "not run here yet"

// displayStatus is the status shown by list and status.
func (w *workspace) displayStatus() string {
	if w.notHere {
		return statusNotHere
	}
	if w.meta.Status == statusRunning {
		if _, held := lockHolder(w); !held {
			return statusKilled
		}
	}
	return w.meta.Status
}

// relPath shows path relative to root when it is inside it.
func relPath(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	// A root reached through a symbolic link, a path under its real path
	// (a worktree's: defaultWorktreeDir).
	if real := realPath(root); real != root && filepath.IsAbs(path) {
		if r, err := filepath.Rel(real, path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return path
}

// unwrapPathError drops the *PathError wrapper when the message already names
// the path.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// within reports whether path is dir or lies below it (lexically).
func within(dir, path string) bool {
	r, err := filepath.Rel(dir, path)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
}
