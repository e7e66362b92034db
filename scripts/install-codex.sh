#!/usr/bin/env bash
# Installs the Codex CLI that the real-CLI tests (TestRealCodex) run against:
# the npm package @openai/codex at the one version pinned below, into a
# cache folder outside the repository, reused when already there. The last
# line on stdout is the absolute path of the codex executable; npm's chatter
# goes to stderr. So:
#
#   CLAUDE_ITERATE_TEST_CODEX=$(scripts/install-codex.sh | tail -n1) go test -run TestRealCodex ./...
#
# Needs only npm (and the npm registry the first time). The package's
# launcher (bin/codex.js) is a Node script that execs a native binary from a
# per-platform optional dependency (@openai/codex-linux-x64 and the like:
# vendor/<target triple>/bin/codex, beside its bubblewrap and ripgrep). The
# path printed is that native binary's, so the tests' process tree is the
# CLI's own, with no Node in front of it.
#
# Environment: XDG_CACHE_HOME (default ~/.cache); the install goes to
# $XDG_CACHE_HOME/claude-iterate-test/codex-<version>. What it shares with
# install-claude.sh is in lib-install.sh.
set -euo pipefail

# The tested CLI version: change it here only (the README says which one it is).
version=0.171.0
package=@openai/codex
name=install-codex.sh
# shellcheck source=lib-install.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-install.sh"

# works reports whether $1 is a codex executable of the pinned version
# ("codex-cli 0.171.0").
works() {
	local got
	[ -x "$1" ] || return 1
	got=$("$1" --version 2>/dev/null) || return 1
	[ "${got##* }" = "$version" ]
}

# native prints the native binary under the install folder $1.
native() {
	local triple
	case "$(uname -s)-$(uname -m)" in
	Linux-x86_64) triple=x86_64-unknown-linux-musl ;;
	Linux-aarch64 | Linux-arm64) triple=aarch64-unknown-linux-musl ;;
	Darwin-x86_64) triple=x86_64-apple-darwin ;;
	Darwin-arm64) triple=aarch64-apple-darwin ;;
	*) die "no Codex CLI build for $(uname -s) $(uname -m)" ;;
	esac
	local f
	for f in "$1"/node_modules/@openai/codex-*/vendor/"$triple"/bin/codex "$1/node_modules/$package/vendor/$triple/bin/codex"; do
		[ -x "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

dir=$cache/codex-$version

exe=$(native "$dir" 2>/dev/null || true)
if [ -z "$exe" ] || ! works "$exe"; then
	# Optional dependencies on whatever the user's npm config says: the
	# native binary comes from one.
	npm_install "$dir" "codex-$version" --include=optional
	got=$(native "$tmp") ||
		die "the package has no native codex binary for this platform (npm skipped its optional dependency?): see $tmp/node_modules/@openai"
	works "$got" ||
		die "the installed codex does not run or is not version $version: $("$got" --version 2>&1 | head -n3)"
	install_done "$dir"
	exe=$(native "$dir") || die "no codex binary in $dir after the install"
	works "$exe" || die "$exe does not run after the install"
fi

echo "$(cd "$(dirname "$exe")" && pwd -P)/codex"
