package main

// This file holds what bounds archives (archive.go's): the size of a file
// an archive takes and of all its files, past which a file is left out
// unread and named, and the archive directory, used only as a real
// directory (never through a symbolic link).

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// archiveLimits bound what goes into an archive: a file of more than file
// bytes is left out, and so is one that would take the files' bytes past
// total. Left out, a file is named (archiveInfo.tooLarge): clean removes
// no workspace that loses a file unless told to.
type archiveLimits struct{ file, total int64 }

// defaultArchiveLimits are the limits of clean and archive save. The
// largest file a run writes is its log: logBudget of transcripts, then its
// sections; a file half as large again is none of the tool's (a sparse
// file, a disk image). The total allows four such.
var defaultArchiveLimits = archiveLimits{file: logBudget + logBudget/2, total: 4 * (logBudget + logBudget/2)}

// leftOutFile is a file an archive left out for its size.
type leftOutFile struct {
	rel       string // relative to the workspace
	size      int64
	overTotal bool // within the limit of a file, past the total
}

// reason says why f was left out of an archive with limits lim.
func (f leftOutFile) reason(lim archiveLimits) string {
	if f.overTotal {
		return fmt.Sprintf("would take the archive past %s", byteSize(lim.total))
	}
	return fmt.Sprintf("more than the %s an archive takes of a file", byteSize(lim.file))
}

// archiveDirLink refuses the archive directory dir (of the project at
// root) when it is a symbolic link: as the other directories the tool
// keeps, it is used only as a real directory, never written or read
// through a link to elsewhere. nil when it is missing or not a link.
func archiveDirLink(root, dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	shown := relPath(root, dir)
	target, _ := os.Readlink(dir)
	return withHint(fmt.Errorf("the archive directory %s is a symbolic link (to %s): archives are written and read only in a real directory", shown, clip(stripControls(target), 200)),
		"rm %s removes the link (what it leads to stays); the next clean makes the directory", shellQuote(shown))
}

// leaveOut tells whether the regular file rel of size bytes is left out of
// the archive for its size, and counts it in either way.
func (info *archiveInfo) leaveOut(rel string, size int64) bool {
	if size > info.limits.file || info.stored+size > info.limits.total {
		info.tooLarge = append(info.tooLarge, leftOutFile{rel: rel, size: size, overTotal: size <= info.limits.file})
		return true
	}
	info.stored += size
	return false
}

// warnLeftOut prints a warning for each file of info left out of an
// archive of the workspace shown as shownDir, and one when the archive
// directory could not be kept out of git.
func warnLeftOut(env *cliEnv, shownDir string, info *archiveInfo) {
	if info.ignoreErr != nil {
		fmt.Fprintf(env.stderr, "%s: warning: %v\n", progName, info.ignoreErr)
	}
	for _, f := range info.tooLarge {
		fmt.Fprintf(env.stderr, "%s: warning: not archived: %s is %s, %s\n", progName, filepath.Join(shownDir, f.rel), byteSize(f.size), f.reason(info.limits))
	}
}

// planArchive returns what writeArchive would archive of the workspace
// directory dir, writing nothing: for clean to refuse before it asks.
func planArchive(dir string, lim archiveLimits) (*archiveInfo, error) {
	info := &archiveInfo{limits: lim}
	if err := addWorkspace(nil, dir, "", info); err != nil {
		return nil, err
	}
	return info, nil
}
