#!/usr/bin/env bash
# Runs `gpuops lint` with the action's inputs and decides whether its SARIF goes to code
# scanning: only when the lint ran (exit 0 or 1: a usage error's empty report would close the
# category's open alerts), when asked, and not from a fork (its token cannot write alerts).
set -uo pipefail
sarif="${SARIF_FILE:-$RUNNER_TEMP/gpuops.sarif}"
annotations="$RUNNER_TEMP/gpuops.annotations"
rm -f "$annotations" "$sarif"
args=(lint --format "$FORMAT" --output-file "sarif=$sarif")
if [ "$WANT_ANNOTATIONS" = "true" ] && [ "$FORMAT" != "github" ]; then
  args+=(--output-file "github=$annotations")
fi
[ -n "$CONFIG" ] && args+=(--config "$CONFIG")
[ -n "$FAIL_ON" ] && args+=(--fail-on "$FAIL_ON")
# One argument, one path, per line: a line may hold spaces; blank lines are skipped.
while IFS= read -r line || [ -n "$line" ]; do
  [ -n "${line//[[:space:]]/}" ] && args+=("$line")
done <<< "$EXTRA_ARGS"
while IFS= read -r line || [ -n "$line" ]; do
  [ -n "${line//[[:space:]]/}" ] && args+=("$line")
done <<< "$PATHS"

"$ROOT/bin/gpuops" "${args[@]}"
code=$?
# Workflow commands only act when printed, so the annotations file goes to the log.
[ -f "$annotations" ] && cat "$annotations"
{
  echo "exit-code=$code"
  echo "sarif-file=$sarif"
} >> "$GITHUB_OUTPUT"

upload=false
if [ "$WANT_UPLOAD" != "true" ]; then
  echo "SARIF not uploaded: upload-sarif is $WANT_UPLOAD"
elif [ "$code" -gt 1 ]; then
  echo "::warning title=gpuops::SARIF not uploaded: gpuops exited $code (a usage or I/O error), and an empty report would close the open alerts of this category"
elif [ "$FORK" = "true" ] || [ "$DEPENDABOT" = "true" ]; then
  who=$([ "$FORK" = "true" ] && echo "a pull request from a fork" || echo "a Dependabot pull request")
  echo "::notice title=gpuops::SARIF not uploaded: $who has a read-only token, which cannot write code scanning alerts; the annotations show the findings"
elif [ ! -s "$sarif" ]; then
  echo "::warning title=gpuops::SARIF not uploaded: $sarif was not written"
else
  upload=true
fi
echo "upload=$upload" >> "$GITHUB_OUTPUT"
# The upload comes first; the last step fails the action on findings.
exit 0
