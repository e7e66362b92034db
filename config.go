package main

// This file implements configuration. The rules are: one table, configKeys,
// names every key, its type and default; values come from layers, highest
// first — command-line flags, the environment, the workspace
// (.workspace.json "config", else .metadata.json's copy:
// workspacesettings.go), the project (.claude-iterate.json in the project
// root), the user ($XDG_CONFIG_HOME/claude-iterate/config.json) and the
// built-in defaults — and the effective value of a key is the one from the
// highest layer that sets it. A config file may nest keys
// ({"claude":{"command":…}}) or spell them dotted ({"claude.command":…}).
// Unknown keys and values of the wrong type are errors naming the file, the
// position and the key; nothing is ignored (configvalue.go reads and checks
// the values; configset.go writes them).

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type configKind int

const (
	kindString configKind = iota
	kindPath
	kindCount
	kindSeconds
	kindBool
	kindOutputLevel
	kindStringList
	kindEventList
	kindURL
	kindConditions
	kindOnQuestion
	kindNumber   // a number, 0 or more
	kindDuration // a duration as a string: "90s", "2h30m", "1h 30m"; 0 none
)

// defaultLoopStagnation is the loop mode's stagnation threshold: a loop
// iteration is meant to finish an item, and an item may well take two or
// three; five without any is an agent going round in circles.
const defaultLoopStagnation = 5

// configKey describes one configuration key.
type configKey struct {
	name string
	kind configKind
	def  any
	doc  string
}

// Output levels.
const (
	outputQuiet    = "quiet"
	outputProgress = "progress"
	outputVerbose  = "verbose"
)

// notifyEventNames are the notification events.
var notifyEventNames = []string{"execution_start", "iteration", "iteration_milestone", "status_update", "limit_wait", "question", "answered", "verification_passed", "verification_failed", "completion", "error", "stopped"}

// configKeys is the table of every configuration key.
var configKeys = []configKey{
	{"workspacesDir", kindPath, "claude-iterate/workspaces", "where workspaces named on the command line live (relative to the project root, or absolute)"},
	{"defaultMaxIterations", kindCount, 0, "iterations before a run stops; 0 means 50 in loop mode, 20 in iterative mode"},
	{"defaultDelay", kindSeconds, 2.0, "seconds to wait between iterations"},
	{"defaultStagnationThreshold", kindCount, 2, "iterative mode: consecutive iterations without work that stop the run; 0 means never"},
	{"loopStagnationThreshold", kindCount, defaultLoopStagnation, "loop mode: consecutive iterations without a higher progress.completed that stop the run; 0 means never (ralph mode: never unless set)"},
	{"outputLevel", kindOutputLevel, outputProgress, "quiet, progress or verbose"},
	{"agent", kindString, agentClaude, "the agent CLI that runs the iterations: claude or codex (also: --agent)"},
	{"fallbackAgents", kindStringList, []string{}, "agents that take over, in order, when the one running hits its usage limit, e.g. [\"codex\"] (also: --fallback-agent)"},
	{"claude.command", kindString, "claude", "claude's executable: a name in $PATH, or a path (relative: to this file's directory; also: --claude, $CLAUDE_ITERATE_CLAUDE)"},
	{"claude.args", kindStringList, []string{}, "extra arguments given to claude before -p (claude only: codex's are agents.codex.args)"},
	{"claude.permissionMode", kindString, "", "claude's --permission-mode (e.g. acceptEdits); empty means claude's default (also: --permission-mode)"},
	{"claude.allowedTools", kindStringList, []string{}, "claude's --allowedTools, e.g. [\"Edit\",\"Write\",\"Bash(go test:*)\"] (also: --allowed-tools)"},
	{"agents.codex.command", kindString, "codex", "codex's executable: a name in $PATH, or a path (relative: to this file's directory; also: $CLAUDE_ITERATE_CODEX)"},
	{"agents.codex.args", kindStringList, []string{}, "extra arguments given to codex exec, before the tool's own"},
	{"agents.codex.pricing.inputPerMTok", kindNumber, codexDefaultPricing.Input, "USD per million input tokens not cached, to estimate codex's cost (default: " + codexPricingDate + ")"},
	{"agents.codex.pricing.cachedInputPerMTok", kindNumber, codexDefaultPricing.CachedInput, "USD per million cached input tokens, to estimate codex's cost"},
	{"agents.codex.pricing.outputPerMTok", kindNumber, codexDefaultPricing.Output, "USD per million output tokens, to estimate codex's cost"},
	{"notifyUrl", kindURL, "", "URL to POST ntfy-style notifications to; empty means none"},
	{"notifyEvents", kindEventList, []string{"all"}, "events to notify: all, or some of " + strings.Join(notifyEventNames, ", ")},
	{"notification.statusWatch.enabled", kindBool, true, "notify when the agent updates .status.json"},
	{"notification.statusWatch.debounceMs", kindCount, 2000, "milliseconds to wait for .status.json to settle"},
	{"notification.statusWatch.notifyOnlyMeaningful", kindBool, true, "ignore .status.json changes of the timestamp only"},
	{"serve.url", kindURL, "", "the address at which 'claude-iterate serve' is reached (from a phone): the question and completion notifications link to the run's page there; empty means no link"},
	{"iterationTimeout", kindDuration, "0", "end an iteration that runs longer, e.g. \"1h\" (a failed iteration); 0 means never (also: --iteration-timeout)"},
	{"idleTimeout", kindDuration, "0", "end an iteration whose agent prints nothing for this long, e.g. \"10m\" (a long tool call prints nothing while it runs); 0 means never (also: --idle-timeout)"},
	{"minIterations", kindCount, 0, "a completion claimed before this iteration is not accepted; 0 means any"},
	{"onQuestion", kindOnQuestion, onQuestionWait, "when the agent asks a question: wait (for 'claude-iterate answer'), stop or continue"},
	{"verification.autoVerify", kindBool, false, "verify a claimed completion with a read-only verifier before the run ends (also: run --verify)"},
	{"verification.maxAttempts", kindCount, 2, "failed verifications that end the run (exit 1)"},
	{"verification.agent", kindString, "", "the verifier's agent CLI (claude or codex); empty: the run's agent (also: verify --agent)"},
	{"verification.depth", kindString, depthStandard, "how hard the verifier looks: quick, standard or deep"},
	{"git.worktree", kindBool, false, "run the agent in a git worktree of its own, on branch claude-iterate/<workspace> (also: run/init --worktree)"},
	{"git.commit", kindBool, true, "commit each iteration's changes: with a worktree unless false, without one only when set true (also: run --commit, --no-commit)"},
	{"stop", kindConditions, nil, "stop conditions: {\"conditions\":[…], \"success\":[…], \"failure\":[…]} (see 'help run')"},
}

func lookupConfigKey(name string) *configKey {
	for i := range configKeys {
		if configKeys[i].name == name {
			return &configKeys[i]
		}
	}
	return nil
}

// Layer names, as the config command shows them.
const (
	layerFlag      = "flag"
	layerEnv       = "env"
	layerWorkspace = "workspace"
	layerProject   = "project"
	layerUser      = "user"
	layerDefault   = "default"
)

// configLayer is the keys one source sets.
type configLayer struct {
	name   string
	path   string // the file it came from, if any
	values map[string]any
}

// settings is the effective configuration: each key's value, typed, and
// for the config command where it came from.
type settings struct {
	WorkspacesDir string
	MaxIterations int // 0: the mode's default
	Delay         time.Duration
	Stagnation    int
	OutputLevel   string
	ClaudeCommand string
	ClaudeArgs    []string
	// Agent is the agent CLI of the iterations, FallbackAgents those that
	// take over at a usage limit (agentcli.go); Codex is codex's keys.
	Agent          string
	FallbackAgents []string
	Codex          codexSettings
	NotifyURL      string
	NotifyEvents   []string
	StatusWatch    statusWatchSettings
	ServeURL       string      // where 'serve' is reached: the notifications' view action
	Stop           *stopConfig // nil: none configured
	MinIterations  int
	OnQuestion     string
	Verification   verificationSettings

	GitWorktree, GitCommit bool // the worktree and the commits (gitrun.go)

	// LoopStagnation is Stagnation for loop mode.
	LoopStagnation int

	// IterationTimeout and IdleTimeout are the hang protections (0: none).
	IterationTimeout, IdleTimeout time.Duration

	// PermissionMode and AllowedTools are passed to claude (permissionArgs).
	PermissionMode string
	AllowedTools   []string

	values  map[string]any    // by key, as the config command shows them
	sources map[string]string // the layer each key's value came from
	layers  []*configLayer
}

// statusWatchSettings are the notification.statusWatch keys.
type statusWatchSettings struct {
	Enabled        bool
	Debounce       time.Duration
	OnlyMeaningful bool
}

// isDefault reports whether key's value is the built-in default.
func (s *settings) isDefault(key string) bool { return s.sources[key] == layerDefault }

// set stores the value of key (of its kind, checked when it was read) in
// its typed field; it reports false for a key it does not know, which a
// test rules out for every key of configKeys.
func (s *settings) set(key string, v any) bool {
	switch key {
	case "workspacesDir":
		s.WorkspacesDir = v.(string)
	case "defaultMaxIterations":
		s.MaxIterations = v.(int)
	case "defaultDelay":
		s.Delay = time.Duration(v.(float64) * float64(time.Second))
	case "defaultStagnationThreshold":
		s.Stagnation = v.(int)
	case "loopStagnationThreshold":
		s.LoopStagnation = v.(int)
	case "outputLevel":
		s.OutputLevel = v.(string)
	case "agent":
		s.Agent = v.(string)
	case "fallbackAgents":
		s.FallbackAgents = v.([]string)
	case "agents.codex.command":
		s.Codex.Command = v.(string)
	case "agents.codex.args":
		s.Codex.Args = v.([]string)
	case "agents.codex.pricing.inputPerMTok":
		s.Codex.Pricing.Input = v.(float64)
	case "agents.codex.pricing.cachedInputPerMTok":
		s.Codex.Pricing.CachedInput = v.(float64)
	case "agents.codex.pricing.outputPerMTok":
		s.Codex.Pricing.Output = v.(float64)
	case "verification.agent":
		s.Verification.Agent = v.(string)
	case "claude.command":
		s.ClaudeCommand = v.(string)
	case "claude.args":
		s.ClaudeArgs = v.([]string)
	case "claude.permissionMode":
		s.PermissionMode = v.(string)
	case "claude.allowedTools":
		s.AllowedTools = v.([]string)
	case "notifyUrl":
		s.NotifyURL = v.(string)
	case "notifyEvents":
		s.NotifyEvents = v.([]string)
	case "notification.statusWatch.enabled":
		s.StatusWatch.Enabled = v.(bool)
	case "notification.statusWatch.debounceMs":
		s.StatusWatch.Debounce = time.Duration(v.(int)) * time.Millisecond
	case "notification.statusWatch.notifyOnlyMeaningful":
		s.StatusWatch.OnlyMeaningful = v.(bool)
	case "serve.url":
		s.ServeURL = v.(string)
	case "stop":
		s.Stop, _ = v.(*stopConfig)
	case "verification.autoVerify":
		s.Verification.Auto = v.(bool)
	case "verification.maxAttempts":
		s.Verification.MaxAttempts = v.(int)
	case "verification.depth":
		s.Verification.Depth = v.(string)
	case "minIterations":
		s.MinIterations = v.(int)
	case "iterationTimeout":
		s.IterationTimeout, _ = parseDuration(v.(string)) // checked when read
	case "idleTimeout":
		s.IdleTimeout, _ = parseDuration(v.(string))
	case "onQuestion":
		s.OnQuestion = v.(string)
	default:
		return s.setGit(key, v) // gitrun.go
	}
	return true
}

// resolveSettings merges layers, highest first, over the defaults.
func resolveSettings(layers ...*configLayer) *settings {
	s := &settings{values: map[string]any{}, sources: map[string]string{}}
	for _, k := range configKeys {
		s.values[k.name], s.sources[k.name] = k.def, layerDefault
	}
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		if l == nil {
			continue
		}
		s.layers = append([]*configLayer{l}, s.layers...)
		for k, v := range l.values {
			s.values[k], s.sources[k] = v, l.name
		}
	}
	for k, v := range s.values {
		s.set(k, v)
	}
	return s
}

// userConfigPath returns the user's config file path.
func userConfigPath() string {
	b, ok := configBase()
	if !ok {
		return ""
	}
	return filepath.Join(b.own(), "config.json")
}

// projectConfigName is the project config file, in the project root.
const projectConfigName = ".claude-iterate.json"

// loadFileLayer reads a config file; a missing file is an empty layer.
func loadFileLayer(name, path string) (*configLayer, error) {
	l := &configLayer{name: name, path: path, values: map[string]any{}}
	if path == "" {
		return l, nil
	}
	doc, err := readJSONDoc(path)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		var fe *fileError
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, readFault("", path, path, err, true)
	}
	if err := doc.wantObject(); err != nil {
		return nil, err
	}
	if err := parseConfigObject(doc, doc.Root, "", l.values); err != nil {
		return nil, err
	}
	return l, nil
}

// baseLayers loads the user and project layers, for a command that needs
// the settings (run, verify, init, setup, edit): a broken file is an error,
// with a hint (configFixHint).
func baseLayers(projectRoot string) (project, user *configLayer, err error) {
	user, err = loadFileLayer(layerUser, userConfigFile())
	if err != nil {
		return nil, nil, configFixHint(err, userConfigPath())
	}
	projectPath := filepath.Join(projectRoot, projectConfigName)
	project, err = loadFileLayer(layerProject, projectPath)
	if err != nil {
		return nil, nil, configFixHint(err, projectPath)
	}
	return project, user, nil
}

// configFixHint adds to err, a fault in the config file at path that has
// no hint of its own (a typo: a FIFO or an oversized file has one), what
// to do: fix it, or move it aside to go on without it.
func configFixHint(err error, path string) error {
	var he *hintError
	if errors.As(err, &he) {
		return err
	}
	return withHint(err, "fix it, or move it aside to go on without it: mv %s %s", shellQuote(path), shellQuote(path+".broken"))
}

// brokenLayer is a config file a lenient command left out: the layer's
// name, its file and why it cannot be read.
type brokenLayer struct {
	name, path string
	err        error
}

// baseLayersLenient is baseLayers for the commands that do not need the
// settings: a broken file is left out (its layer nil) and returned in
// broken, the project's first.
func baseLayersLenient(projectRoot string) (project, user *configLayer, broken []brokenLayer) {
	load := func(name, path string) *configLayer {
		l, err := loadFileLayer(name, path)
		if err != nil {
			broken = append(broken, brokenLayer{name, path, err})
		}
		return l
	}
	project = load(layerProject, filepath.Join(projectRoot, projectConfigName))
	user = load(layerUser, userConfigPath())
	return project, user, broken
}

// envLayer holds the keys set by environment variables.
func envLayer() *configLayer {
	l := &configLayer{name: layerEnv, values: map[string]any{}}
	if c := os.Getenv("CLAUDE_ITERATE_CLAUDE"); c != "" {
		l.values["claude.command"] = c
	}
	agentEnvLayer(l)
	return l
}
