#!/usr/bin/env bash
# bad-inputs.sh TPUC TPUSIM MODEL_DIR OUT_DIR
# Each malformed input must give exactly one line on stderr and exit 1: no
# crash (exit >= 128), no hang (timeout), no silent success.
set -uo pipefail
tpuc=$1 tpusim=$2 model=$3 out=$4
mkdir -p "$out"
failures=0

expect_error() { # expect_error DESCRIPTION PATTERN COMMAND...
  local description=$1 pattern=$2
  shift 2
  timeout 60 "$@" >"$out/stdout" 2>"$out/stderr"
  local status=$?
  local lines
  lines=$(wc -l <"$out/stderr")
  if [ "$status" -ne 1 ] || [ "$lines" -ne 1 ] || ! grep -qE "$pattern" "$out/stderr"; then
    echo "FAIL: $description: exit $status, $lines stderr lines:"
    cat "$out/stderr"
    failures=$((failures + 1))
  else
    echo "ok: $description: $(cat "$out/stderr")"
  fi
}

"$tpuc" "$model/model.onnx" -o "$out/good.tpub" || exit 1
size=$(stat -c %s "$out/good.tpub")
head -c 4096 /dev/urandom >"$out/random.bin"
head -c $((size / 2)) "$out/good.tpub" >"$out/truncated.tpub"
head -c 20 "$out/good.tpub" >"$out/header-only.tpub"
cp "$out/good.tpub" "$out/flipped.tpub"
# Flip one bit in the middle of the instruction stream.
offset=$((size / 3))
byte=$(od -An -tu1 -j "$offset" -N1 "$out/good.tpub" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 16)))" | dd of="$out/flipped.tpub" bs=1 seek="$offset" conv=notrunc status=none
echo '{"name": "broken", "array": {"rows": 0}}' >"$out/bad-config.json"

expect_error "tpuc: missing model" "tpuc: error: .*cannot open" "$tpuc" "$out/nope.onnx" -o "$out/x.tpub"
expect_error "tpuc: random bytes as a model" "tpuc: error: " "$tpuc" "$out/random.bin" -o "$out/x.tpub"
cp "$out/random.bin" "$out/random.onnx"
expect_error "tpuc: random bytes as .onnx" "tpuc: error: .*random.onnx" "$tpuc" "$out/random.onnx" -o "$out/x.tpub"
expect_error "tpuc: invalid config" "tpuc: error: .*bad-config.json" "$tpuc" "$model/model.onnx" -o "$out/x.tpub" --config "$out/bad-config.json"
expect_error "tpuc: missing config" "tpuc: error: .*nope.json" "$tpuc" "$model/model.onnx" -o "$out/x.tpub" --config "$out/nope.json"
expect_error "tpusim: missing bundle" "tpusim: error: .*nope.tpub" "$tpusim" "$out/nope.tpub"
expect_error "tpusim: random bytes" "tpusim: error: " "$tpusim" "$out/random.bin"
expect_error "tpusim: truncated bundle" "tpusim: error: " "$tpusim" "$out/truncated.tpub"
expect_error "tpusim: header only" "tpusim: error: " "$tpusim" "$out/header-only.tpub"
expect_error "tpusim: bit-flipped bundle" "tpusim: error: .*checksum" "$tpusim" "$out/flipped.tpub"
expect_error "tpusim: missing data dir" "tpusim: error: .*input_0.pb" "$tpusim" "$out/good.tpub" --data "$out/no-such-dir"

[ "$failures" -eq 0 ] || { echo "$failures bad-input checks failed"; exit 1; }
