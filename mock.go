package main

import "io"

const mockAgentCommand = "__mock-agent"

func runMockAgent(args []string, stdin io.Reader, stdout, stderr io.Writer) int { return 0 }
