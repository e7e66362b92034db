package main

import "testing"

// TestCodexSandboxArg: the codex arguments that choose its sandbox or
// approvals, in each form the CLI takes them, and none that do not.
func TestCodexSandboxArg(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--dangerously-bypass-approvals-and-sandbox"}, "--dangerously-bypass-approvals-and-sandbox"},
		{[]string{"-m", "o3", "--yolo"}, "--yolo"},
		{[]string{"--approve-for-me"}, "--approve-for-me"},
		{[]string{"--sandbox", "danger-full-access"}, "--sandbox"},
		{[]string{"--sandbox=workspace-write"}, "--sandbox=workspace-write"},
		{[]string{"-s", "workspace-write"}, "-s"},
		{[]string{"-sworkspace-write"}, "-sworkspace-write"},
		{[]string{"--add-dir", "/tmp"}, "--add-dir"},
		{[]string{"-c", `sandbox_mode="danger-full-access"`}, `-c sandbox_mode="danger-full-access"`},
		{[]string{"--config", "sandbox_workspace_write.network_access=true"}, "--config sandbox_workspace_write.network_access=true"},
		{[]string{"--config=sandbox_mode=x"}, "--config=sandbox_mode=x"},
		{[]string{`-csandbox_mode="x"`}, `-csandbox_mode="x"`},
		{[]string{"-c", `model="o3"`, "--strict-config", "-m", "gpt-5.5"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := codexSandboxArg(tt.args); got != tt.want {
			t.Errorf("codexSandboxArg(%q) = %q; want %q", tt.args, got, tt.want)
		}
	}
}
