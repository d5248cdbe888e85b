#!/usr/bin/env bash
# gpuops from the action's source: the binary the cache restored for this key, else a build
# with the versions Cargo.lock pins (`--locked`). Step output `from`: `cache` or `source`.
set -euo pipefail
mkdir -p "$ROOT/bin"
echo "$ROOT/bin" >> "$GITHUB_PATH"
# Restored from the cache, or built by an earlier use of the action in this job.
if [ -x "$ROOT/bin/gpuops" ] && [ "$(cat "$ROOT/key" 2>/dev/null)" = "$KEY" ]; then
  "$ROOT/bin/gpuops" --version
  echo "from=cache" >> "$GITHUB_OUTPUT"
  exit 0
fi
if ! command -v cargo >/dev/null; then
  echo "::error title=gpuops::cargo is needed to build gpuops: add a Rust toolchain step (e.g. dtolnay/rust-toolchain) before this action, or use it at a released version"
  exit 1
fi
cargo install --locked --root "$ROOT" --path "$ACTION_PATH"
echo "$KEY" > "$ROOT/key"
"$ROOT/bin/gpuops" --version
echo "from=source" >> "$GITHUB_OUTPUT"
