#!/usr/bin/env bash
# Usage: expect-one-line-error.sh TOOL ARGS...
# Passes when TOOL exits 1, prints nothing on stdout and exactly one line
# "<tool>: error: ..." on stderr.
set -uo pipefail
tool_name=$(basename "$1")
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
status=$?
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }
[ "$status" -eq 1 ] || fail "exit status $status, expected 1"
[ ! -s "$out" ] || fail "stdout is not empty"
[ "$(wc -l <"$err")" -eq 1 ] || fail "stderr is not exactly one line"
grep -q "^$tool_name: error: " "$err" || fail "stderr does not start with '$tool_name: error: '"
cat "$err"
