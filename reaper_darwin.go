//go:build darwin

package main

// canPeekChildren: macOS has no subreaper, so orphans never re-parent to the
// tool, and listing processes there runs ps, itself a child: no reaper.
const canPeekChildren = false

// peekDeadChild is never called on macOS.
func peekDeadChild() int { return 0 }
