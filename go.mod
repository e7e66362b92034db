module github.com/claude-iterate/claude-iterate

go 1.26.8

require (
	// Test dependencies: the binary itself imports only the standard library.
	github.com/creack/pty v1.1.24
	github.com/rogpeppe/go-internal v1.16.0
)

require (
	golang.org/x/sys v0.26.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
