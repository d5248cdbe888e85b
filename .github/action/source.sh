#!/usr/bin/env bash
# What the action installs, as step outputs: `root` (where gpuops goes), `target` (the release
# asset's target triple), `key` (the cache key of a build: a hash of every file compiled into
# the binary) and `release` (the version tag, when the action's ref is a released version: the
# tag itself, a major tag on it, or the commit it points at).
set -euo pipefail
cd "$ACTION_PATH"

case "$RUNNER_OS-$RUNNER_ARCH" in
  Linux-X64) target=x86_64-unknown-linux-musl ;;
  Linux-ARM64) target=aarch64-unknown-linux-musl ;;
  macOS-X64) target=x86_64-apple-darwin ;;
  macOS-ARM64) target=aarch64-apple-darwin ;;
  *) target="" ;;
esac
if command -v sha256sum >/dev/null; then sha=(sha256sum); else sha=(shasum -a 256); fi

# Sources, bundled policies, templates, the instance catalog, the lock file: all compiled in.
compiled=(Cargo.toml Cargo.lock src policies templates)
[ -f build.rs ] && compiled+=(build.rs)
hash=$(find "${compiled[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 "${sha[@]}" \
  | "${sha[@]}" | cut -c1-20)
version=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' Cargo.toml | head -n1)

# The commit a ref names, from the GitHub API (`application/vnd.github.sha` answers just that).
commit_of() {
  curl -fsS --retry 2 --max-time 20 \
    -H "Accept: application/vnd.github.sha" \
    ${TOKEN:+-H "Authorization: Bearer $TOKEN"} \
    "${GITHUB_API_URL:-https://api.github.com}/repos/$ACTION_REPO/commits/$1" 2>/dev/null || true
}

release=""
# `uses: ./` has no repository or ref: always a build of the checkout.
if [ -n "${ACTION_REPO:-}" ] && [ -n "${ACTION_REF:-}" ] && [ -n "$target" ] && [ -n "$version" ]; then
  if [ "$ACTION_REF" = "v$version" ]; then
    release="v$version"
  else
    ref=$(commit_of "$ACTION_REF")
    tagged=$(commit_of "v$version")
    if [ -n "$ref" ] && [ "$ref" = "$tagged" ]; then
      release="v$version"
    fi
  fi
fi

{
  echo "root=${RUNNER_TOOL_CACHE:-$HOME/.cache}/gpuops-action/$hash"
  echo "target=$target"
  echo "key=gpuops-${RUNNER_OS}-${RUNNER_ARCH}-${hash}"
  echo "release=$release"
} >> "$GITHUB_OUTPUT"
if [ -n "$release" ]; then
  echo "gpuops $release: the release binary for $target"
else
  echo "gpuops ${ACTION_REF:-(local checkout)}: not a released version, built from source (cache key ${hash})"
fi
