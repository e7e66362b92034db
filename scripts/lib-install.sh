# shellcheck shell=bash
# What install-claude.sh and install-codex.sh share: sourced by them, never
# run. The sourcing script sets name (its own name, for messages), version
# and package (the npm package and its pinned version) first.
#
# Environment: XDG_CACHE_HOME (default ~/.cache); each install goes to a
# folder of its own below $XDG_CACHE_HOME/claude-iterate-test.

die() {
	echo "$name: $*" >&2
	exit 1
}

cache=${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/claude-iterate-test

# npm_install DIR TMPNAME [NPM-FLAG...] installs $package@$version with npm
# into $tmp, a new folder beside DIR named after TMPNAME, with npm's
# chatter on stderr. $tmp is removed when the script exits, unless
# install_done has moved it to DIR by then: an interrupted install never
# leaves a half-filled version folder behind.
npm_install() {
	local dir=$1 tmpname=$2
	shift 2
	command -v npm >/dev/null 2>&1 ||
		die "npm not found: install Node.js with npm (e.g. apt-get install npm), then run this again"
	mkdir -p "$cache" || die "cannot create $cache"
	tmp=$(mktemp -d "$cache/.install-$tmpname.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	echo "$name: installing $package@$version into $dir" >&2
	npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund \
		"$@" "$package@$version" >&2 ||
		die "npm install $package@$version failed"
}

# install_done DIR moves the install in $tmp to DIR, in place of what was
# there.
install_done() {
	rm -rf "$1"
	mv "$tmp" "$1"
	trap - EXIT
}
