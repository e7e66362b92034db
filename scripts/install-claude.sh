#!/usr/bin/env bash
# Installs the claude CLI that the real-CLI tests (TestRealClaude) run against:
# the npm package @anthropic-ai/claude-code at the one version pinned below,
# into a cache folder outside the repository, reused when already there. The
# last line on stdout is the absolute path of the claude executable; npm's
# chatter goes to stderr. So:
#
#   CLAUDE_ITERATE_TEST_CLAUDE=$(scripts/install-claude.sh | tail -n1) go test -run TestRealClaude ./...
#
# Needs only npm (and the npm registry the first time). The package ships the
# CLI as a native binary in a per-platform optional dependency, which its
# postinstall step links into place; Node's own version does not matter.
#
# Environment: XDG_CACHE_HOME (default ~/.cache); the install goes to
# $XDG_CACHE_HOME/claude-iterate-test/<version>. What it shares with
# install-codex.sh is in lib-install.sh.
set -euo pipefail

# The tested CLI version: change it here only (the README says which one it is).
version=2.1.330
package=@anthropic-ai/claude-code
name=install-claude.sh
# shellcheck source=lib-install.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-install.sh"

# works reports whether $1 is a claude executable of the pinned version.
works() {
	local got
	[ -x "$1" ] || return 1
	got=$("$1" --version 2>/dev/null) || return 1
	[ "${got%% *}" = "$version" ]
}

dir=$cache/$version
exe=$dir/node_modules/.bin/claude

if ! works "$exe"; then
	# Scripts and optional dependencies on whatever the user's npm config
	# says: the native binary comes from both.
	npm_install "$dir" "$version" --ignore-scripts=false --include=optional
	if ! works "$tmp/node_modules/.bin/claude" && [ -f "$tmp/node_modules/$package/install.cjs" ]; then
		# A postinstall that npm skipped leaves a stub; run it by hand, as
		# the stub itself advises.
		echo "install-claude.sh: running the package's postinstall step" >&2
		(cd "$tmp/node_modules/$package" && node install.cjs) >&2 || true
	fi
	works "$tmp/node_modules/.bin/claude" ||
		die "the installed claude does not run or is not version $version: $("$tmp/node_modules/.bin/claude" --version 2>&1 | head -n3)"
	install_done "$dir"
	works "$exe" || die "$exe does not run after the install"
fi

echo "$(cd "$(dirname "$exe")" && pwd -P)/claude"
