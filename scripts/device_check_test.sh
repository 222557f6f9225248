#!/usr/bin/env bash
# Tests scripts/device_check.sh on a CPU machine, with binaries built without XLA into a temporary folder: the
# rehearsal (GOMLX_BACKEND=go:… stands in for XLA) passes every check and says the GPU path was not exercised; with
# no backend given and no plugin anywhere under a fake search root it stops with exit status 3 saying so; with a
# plugin file found by the disk search that is not a real plugin it fails at the backend check, naming GOMLX_BACKEND.
# Usage: bash scripts/device_check_test.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
go build -tags noxla -o "$tmp/bin/protolab" ./experiments/cmd/protolab || exit 1
fail=0
check() { # description, command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
export DEVICE_CHECK_BIN_DIR=$tmp/bin HOME=$tmp/home
mkdir -p "$tmp/home" "$tmp/search"

GOMLX_BACKEND=go:parallelism=-1 DEVICE_CHECK_OUT=$tmp/r1 DEVICE_CHECK_STEPS=5 DEVICE_CHECK_BENCH_ARGS="--preset tiny" \
  bash scripts/device_check.sh >"$tmp/r1.log" 2>&1
check "rehearsal: exit 0 (got $?)" test $? = 0
for c in backend_check train_xla train_go eval_go_weights_on_xla eval_go_weights_on_go compare_losses bench_small; do
  check "rehearsal: PASS $c" grep -q "PASS $c " "$tmp/r1/device_check.txt"
done
check "rehearsal: says the GPU path was not exercised" \
  grep -q "rehearsal on the go backend: the GPU path was NOT exercised" "$tmp/r1/device_check.txt"
check "rehearsal: the same weights give the same loss" grep -q "relative difference 0.00e+00" "$tmp/r1/compare_losses.log"

env -u GOMLX_BACKEND DEVICE_CHECK_OUT=$tmp/r2 DEVICE_CHECK_SEARCH_ROOT=$tmp/search \
  bash scripts/device_check.sh >"$tmp/r2.log" 2>&1
check "no plugin: exit 3 (got $?)" test $? = 3
check "no plugin: GPU path NOT exercised" grep -q "no PJRT plugin on this machine.*GPU path NOT exercised" "$tmp/r2.log"

mkdir -p "$tmp/search/jax_plugins/xla_cuda13" && echo junk >"$tmp/search/jax_plugins/xla_cuda13/xla_cuda_plugin.so"
env -u GOMLX_BACKEND DEVICE_CHECK_OUT=$tmp/r3 DEVICE_CHECK_SEARCH_ROOT=$tmp/search \
  bash scripts/device_check.sh >"$tmp/r3.log" 2>&1
check "plugin found by the disk search, this binary without XLA: exit 1 (got $?)" test $? = 1
check "the plugin found is used by path" grep -q "GOMLX_BACKEND=xla:$tmp/search/jax_plugins/xla_cuda13/xla_cuda_plugin.so" "$tmp/r3.log"
check "the backend check fails, naming the fix" grep -q "built without the XLA backend" "$tmp/r3.log"
if [[ $fail != 0 ]]; then
  for f in r1 r2 r3; do echo "--- $f ---"; tail -30 "$tmp/$f.log"; done
  exit 1
fi
echo "device_check_test: OK"
