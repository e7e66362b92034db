package main

// This file runs claude-iterate against the real Codex CLI, as
// realclaude_test.go does against claude: the scenarios in
// testdata/realcodex/*.txtar, one subtest each, drive the binary with
// --agent codex and $CLAUDE_ITERATE_CODEX naming the CLI given by
// $CLAUDE_ITERATE_TEST_CODEX (scripts/install-codex.sh installs the tested
// version). The CLI talks to a fake Responses API on loopback
// (fakeresponses_test.go), started per scenario from the scenario's "api"
// file (in which $WORK stands for the scenario's directory), named in a
// config.toml of the scenario's own CODEX_HOME (codexConfig). The scenarios
// run one at a time, for the reason TestRealClaude's do.
//
// Commands, besides the pty harness's and TestScript's:
//
//	api served N        the fake API answered exactly N model requests
//	api outputs FILE    write the tool outputs Codex sent back (its commands'
//	                    output, its sandbox's refusals, apply_patch's
//	                    verdicts) to FILE, one after the other
//	api developer FILE  write the developer messages of the last model
//	                    request (Codex's instructions and the system prompt
//	                    it was given) to FILE
//	noprocs             no process is left running (the terminal's shell aside)
//
// A request for another host (the fake is the CLI's proxy) fails the
// scenario at its end.
//
// TestRealCodexCapture writes the transcripts in testdata/fixtures/codex/
// from the same CLI and fake: the adapter's seeds and the README's record
// of what the pinned version prints.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// realCodexEnv names the variable holding the Codex CLI under test.
const realCodexEnv = "CLAUDE_ITERATE_TEST_CODEX"

// codexTestModel is a model the pinned CLI knows the metadata of without
// asking a server (an unknown one costs a warning item in every transcript).
const codexTestModel = "gpt-5.5"

// codexConfig is the config.toml of a test's CODEX_HOME: the fake API as
// the model provider, with an API key from the environment (no login), no
// retries (a scripted error is the answer, not the first of five), and
// every feature that calls home off: the curated plugins' sync (git and
// HTTPS to github.com and chatgpt.com), remote plugins, apps, the update
// check, analytics, feedback, web search; and /tmp is no writable root of
// its sandbox. TestRealCodexCapture runs codex
// with --strict-config: a key that a new version no longer knows fails it
// instead of being ignored.
func codexConfig(baseURL string) string {
	return `model = "` + codexTestModel + `"
model_provider = "fake"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.fake]
name = "fake Responses API (claude-iterate tests)"
base_url = "` + baseURL + `"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false
remote_plugin = false
apps = false
image_generation = false
goals = false
tool_suggest = false
computer_use = false
browser_use = false

[analytics]
enabled = false

# Not /tmp: the sandbox keeps .git read-only in its writable roots, and an
# empty /tmp/.git appeared twice on this machine while codex ran, which
# puts every test directory under /tmp inside a "repository"
# (history.txtar failed on it).
[sandbox_workspace_write]
exclude_slash_tmp = true

[feedback]
enabled = false
`
}

// codexEnv is the CLI's environment besides HOME: its own CODEX_HOME, a
// dummy API key, and the fake API as the proxy of every other host, so
// that a request that would leave loopback is caught (fakeResponses.stray).
func codexEnv(codexHome string, api *fakeResponses) []string {
	env := []string{"CODEX_HOME=" + codexHome, "OPENAI_API_KEY=sk-fake-key-for-claude-iterate-tests"}
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"} {
		env = append(env, k+"="+api.srv.URL)
	}
	return append(env, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
}

// codexEnvKeys are the variables codexEnv sets, for the terminal's shell.
var codexEnvKeys = []string{"CODEX_HOME", "OPENAI_API_KEY", "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY",
	"https_proxy", "http_proxy", "all_proxy", "NO_PROXY", "no_proxy", "CLAUDE_ITERATE_CODEX"}

// realCodexCLI returns the CLI named by $CLAUDE_ITERATE_TEST_CODEX, or skips
// the test.
func realCodexCLI(t *testing.T) string {
	return realCLI(t, realCodexEnv, "scripts/install-codex.sh", "codex")
}

func TestRealCodex(t *testing.T) {
	cli := realCodexCLI(t)
	fixtures, err := filepath.Abs("testdata/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	runRealScenarios(t, "testdata/realcodex", cmdCodexAPI, func(env *testscript.Env) error {
		env.Setenv("FIXTURES", fixtures)
		return setupRealCodex(env, cli)
	})
}

// setupRealCodex gives one scenario its environment, its CODEX_HOME and its
// fake API.
func setupRealCodex(env *testscript.Env, cli string) error {
	if err := setupRealHome(env); err != nil {
		return err
	}
	env.Setenv("CLAUDE_ITERATE_CODEX", cli)
	script, err := scenarioAPIScript(env, parseResponsesScript)
	if err != nil {
		return err
	}
	api := startFakeResponses(script, func(format string, args ...any) { env.T().Log(fmt.Sprintf(format, args...)) })
	env.Defer(func() {
		api.mu.Lock()
		stray := api.stray
		api.mu.Unlock()
		api.close()
		if len(stray) > 0 {
			env.T().Fatal(fmt.Sprintf("the CLI sent requests for other hosts (they would have left loopback): %s", strings.Join(stray, ", ")))
		}
	})
	env.Values[fakeAPIKey{}] = api
	codexHome := filepath.Join(env.WorkDir, "codexhome")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(codexConfig(api.url())), 0o600); err != nil {
		return err
	}
	for _, kv := range codexEnv(codexHome, api) {
		k, v, _ := strings.Cut(kv, "=")
		env.Setenv(k, v)
	}
	return nil
}

// cmdCodexAPI asserts or writes what the fake API saw.
//
//	api served N | api outputs FILE | api developer FILE
func cmdCodexAPI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: api served N | api outputs FILE | api developer FILE")
	}
	api := ts.Value(fakeAPIKey{}).(*fakeResponses)
	api.mu.Lock()
	served, outputs, developer := api.served, api.outputs, api.developer
	api.mu.Unlock()
	switch args[0] {
	case "served":
		want, err := strconv.Atoi(args[1])
		if err != nil {
			ts.Fatalf("api: bad count %q", args[1])
		}
		if served != want {
			ts.Fatalf("the fake API answered %d model requests; want %d", served, want)
		}
	case "outputs":
		var b strings.Builder
		for i, o := range outputs {
			fmt.Fprintf(&b, "--- output %d\n%s\n", i+1, o)
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
	case "developer":
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(developer), 0o644))
	default:
		ts.Fatalf("api: unknown check %q", args[0])
	}
}

// TestPassedEnvCoversCodexEnv keeps the terminal harness's shell in the same
// offline environment as the codex scenarios' exec commands.
func TestPassedEnvCoversCodexEnv(t *testing.T) {
	for _, k := range codexEnvKeys {
		if !slices.Contains(passedEnv, k) {
			t.Errorf("passedEnv lacks %s, which the codex scenarios set", k)
		}
	}
}
