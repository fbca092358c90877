#!/usr/bin/env bash
# Usage: write-random-bundle.sh PATH [MAGIC]
# Writes 4 KiB of fixed pseudo-random bytes to PATH, after MAGIC if given.
set -euo pipefail
{
  printf '%s' "${2:-}"
  awk 'BEGIN { srand(7); for (i = 0; i < 4096; i++) printf "%c", int(rand() * 256) }' </dev/null
} >"$1"
