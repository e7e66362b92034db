package main

// This file reads the targets of the file conditions, file_created and
// file_contains (conditions.go): a file's content searched in pieces, and
// the file as the run found it before its first iteration, since a file
// left from before the run was not created by it (SPEC.md §5), nor written
// with its content.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
)

// resolvePath is p relative to dir (p itself when absolute).
func resolvePath(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

// fileContains reports whether the file at path contains s, reading it in
// pieces so that a huge file costs no more memory than a small one.
func fileContains(path, s string) (bool, error) {
	f, fi, err := openRegular(path) // a fifo or /dev/zero would never end
	if err != nil {
		return false, err
	}
	defer f.Close()
	if fi.Size() > agentFileCap {
		return false, tooLargeError(agentFileCap)
	}
	needle := []byte(s)
	r := bufio.NewReaderSize(io.LimitReader(f, agentFileCap), 64<<10)
	buf := make([]byte, 0, 64<<10+len(needle))
	chunk := make([]byte, 64<<10)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if bytes.Contains(buf, needle) {
			return true, nil
		}
		if keep := len(needle) - 1; len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// fileStart is the target of a file condition as the run found it: a
// file left from before the run was not created by it (SPEC.md §5,
// file_created), nor written with its content (file_contains). Such a
// condition is met once the file is created, replaced or changed since
// (identity, size, modification time: statusCopy's comparison). A
// completion that was refused (by the verifier, --min-iterations, a failed
// iteration) takes its files again as they are (stopSet.rejected): the
// marker an iteration made is its claim, judged once, not the next
// iteration's (tryout 6 defect 2: a DONE.md made in iteration 1 and
// rejected was verified again after every iteration that left it alone),
// as a completion in .status.json counts only in the iteration that wrote
// it (evidence.go).
type fileStart struct {
	file statusCopy // the file at the start, or as a refused completion left it
	// at is the iteration whose refused completion took the file again
	// (0: the run's start), for the reasons.
	at int
}

// unchanged reports whether the file at path is the one taken, as it
// was: nil (no start taken) is never unchanged.
func (f *fileStart) unchanged(path string) bool {
	return f != nil && f.file.exists && f.file.sameID(statOnly(path))
}

// since says since when an unchanged file is as it is, for a reason.
func (f *fileStart) since() string {
	if f.at == 0 {
		return "from before this run, unchanged"
	}
	return fmt.Sprintf("unchanged since its completion was refused at iteration %d: it counts when an iteration creates or changes it", f.at)
}

// rejected takes again, as iteration n left them, the files of the file
// conditions whose completion was refused at n, paths relative to dir: a
// later iteration claims it again by creating or changing one. Those of
// the success conditions only, and none under a not: there a file counts
// as a state (a BLOCKED.md made earlier still keeps not{file_created
// BLOCKED.md} unmet), and the files of an all may come from different
// iterations until a completion is refused. It returns the paths taken,
// as the conditions name them, for the next prompt (promptNotes.rewrite).
func (s *stopSet) rejected(dir string, n int) (paths []string) {
	var take func(c *condition)
	take = func(c *condition) {
		switch c.Type {
		case condNot:
			return
		case condFileCreated, condFileContains:
			now := statOnly(resolvePath(dir, c.Path))
			if c.start == nil {
				c.start = &fileStart{}
			}
			if !c.start.file.sameID(now) {
				c.start.file, c.start.at = now, n
			}
			if !slices.Contains(paths, c.Path) {
				paths = append(paths, c.Path)
			}
		}
		for _, sub := range c.Conditions {
			take(sub)
		}
	}
	for _, gc := range s.ordered {
		if gc.group == groupSuccess {
			take(gc.c)
		}
	}
	return paths
}

// takeFileStarts notes the target of every file condition of s as it is
// now, before the first iteration, paths relative to dir. It returns, once
// per file and type, what the run inherits: the warnings to say.
func (s *stopSet) takeFileStarts(dir string) []string {
	var warns []string
	said := map[string]bool{}
	for _, gc := range s.ordered {
		gc.c.walk(func(c *condition) {
			if c.Type != condFileCreated && c.Type != condFileContains {
				return
			}
			path := resolvePath(dir, c.Path)
			c.start = &fileStart{file: statOnly(path)}
			var msg string
			switch {
			case !c.start.file.exists:
				return
			case c.Type == condFileCreated:
				msg = fmt.Sprintf("%s exists already (from before this run): it counts once an iteration creates or changes it", c.Path)
			default:
				if held, _ := fileContains(path, c.Content); !held {
					return
				}
				msg = fmt.Sprintf("%s holds %q already (from before this run): it counts once an iteration changes it", c.Path, c.Content)
			}
			if !said[msg] {
				said[msg] = true
				warns = append(warns, msg)
			}
		})
	}
	return warns
}
