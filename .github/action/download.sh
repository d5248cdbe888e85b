#!/usr/bin/env bash
# Downloads the release binary and checks it against the release's SHA256SUMS. A release without
# an asset for this target falls back to a build (step output `from` stays empty); a checksum
# that does not match fails the step: that binary is never run.
set -euo pipefail
base="${GITHUB_SERVER_URL:-https://github.com}/$ACTION_REPO/releases/download/$RELEASE"
asset="gpuops-$RELEASE-$TARGET.tar.gz"
tmp=$(mktemp -d "${RUNNER_TEMP:-/tmp}/gpuops-release.XXXXXX")
if ! curl -fsSL --retry 2 -o "$tmp/$asset" "$base/$asset" \
  || ! curl -fsSL --retry 2 -o "$tmp/SHA256SUMS" "$base/SHA256SUMS"; then
  echo "::warning title=gpuops::no release asset $asset at $base; building from source"
  exit 0
fi
(
  cd "$tmp"
  grep " $asset\$" SHA256SUMS > expected || { echo "::error title=gpuops::$asset is not in SHA256SUMS"; exit 1; }
  if command -v sha256sum >/dev/null; then sha256sum -c expected; else shasum -a 256 -c expected; fi
) || { echo "::error title=gpuops::checksum of $asset does not match SHA256SUMS"; exit 1; }
mkdir -p "$ROOT/bin"
tar -xzf "$tmp/$asset" -C "$ROOT/bin" --strip-components=1 "gpuops-$RELEASE-$TARGET/gpuops"
echo "$ROOT/bin" >> "$GITHUB_PATH"
"$ROOT/bin/gpuops" --version
echo "from=release" >> "$GITHUB_OUTPUT"
