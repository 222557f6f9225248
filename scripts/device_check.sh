#!/usr/bin/env bash
# The GPU path, checked on a machine with a GPU in a few minutes. Two steps, because a GPU machine may have no Go:
#
#   scripts/device_check.sh build      # here: builds bin/device/{protolab,fit.test} with cgo and XLA (no noxla)
#   scripts/device_check.sh [run]      # there, from the repository root, with bin/device/ copied over
#
# `run` (the default; it builds first when Go is present and the binary is missing):
#   1. lists the GPUs (nvidia-smi) and locates a PJRT plugin: ProtoLab's own search (`protolab backend`), else a
#      search of the disk for a go-xla or pip-installed JAX plugin, used by path (GOMLX_BACKEND=xla:/abs/path.so);
#      none anywhere is exit status 3, "GPU path not exercised";
#   2. starts the backend and checks a matmul against its known answer (`protolab backend --check`);
#   3. trains the Tiny LM for a few steps under XLA and under the go backend, prints both loss curves' ends, and
#      evaluates the go-trained weights under both backends: the validation losses of the same weights on the same
#      data must agree to 1e-3 relative (float32; XLA on a GPU may use TF32 matmuls);
#   4. runs the speed study's throughput bench at the Small preset (DEVICE_CHECK_BENCH_ARGS) under XLA (tokens/s per mixer and context, the
#      attention row at T = 8192 included) with GPU memory sampled every 200 ms (preallocation off, so the peak is
#      what the runs used);
#   5. with more than one GPU: fit's oracle test that N-device training matches one device (bin/device/fit.test),
#      `protolab launch` starting XLA on each GPU in its own process, and the Tiny LM data-parallel over two devices
#      (train.devices=2), its first loss compared with the single-device run's.
# Everything goes to ${DEVICE_CHECK_OUT:-out/device_check} (and $OUT when set, for the device tool); the summary is
# device_check.txt there. Exit status 0 only when every check passed. GOMLX_BACKEND=go:parallelism=-1 rehearses the
# script on a CPU machine (the go backend stands in for XLA; the summary says the GPU path was not exercised).
# DEVICE_CHECK_BIN_DIR (default bin/device) and DEVICE_CHECK_SEARCH_ROOT (default /, the disk search for a plugin)
# are for scripts/device_check_test.sh.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bindir=${DEVICE_CHECK_BIN_DIR:-$root/bin/device}
bin=$bindir/protolab
mode=${1:-run}

build() {
  echo "device_check: building $bin (cgo, XLA backend included) ..."
  mkdir -p "$(dirname "$bin")"
  # GOEXPERIMENT=simd: the go backend that stands in for XLA in the checks gets its SIMD matmul kernels.
  GOEXPERIMENT=simd CGO_ENABLED=1 go build -trimpath -ldflags=-s -o "$bin" ./experiments/cmd/protolab || return 1
  GOEXPERIMENT=simd CGO_ENABLED=1 go test -c -trimpath -ldflags=-s -o "$bindir/fit.test" ./workbench/fit || return 1
  ls -l "$bindir"
}

case $mode in
  build) build; exit $? ;;
  run) ;;
  *) echo "usage: scripts/device_check.sh [build|run]" >&2; exit 2 ;;
esac

if [[ ! -x $bin ]]; then
  if command -v go >/dev/null; then build || exit 1; else
    echo "device_check: $bin is missing and there is no Go here: run 'scripts/device_check.sh build' on a machine" \
      "with Go and copy bin/device/ over" >&2
    exit 2
  fi
fi

out=${DEVICE_CHECK_OUT:-$root/out/device_check}
rm -rf "$out" && mkdir -p "$out"
summary=$out/device_check.txt
failed=0
say() { echo "device_check: $*" | tee -a "$summary"; }
check() { # name, then the command; its output goes to $out/<name>.log and the console
  local name=$1; shift
  local t0=$(date +%s%N)
  "$@" 2>&1 | tee "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  local dt=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))
  if [[ $rc == 0 ]]; then say "PASS $name (${dt} s)"; else say "FAIL $name (exit $rc, ${dt} s; log $out/$name.log)"; failed=1; fi
  return "$rc"
}
export GOMLX_NO_AUTO_INSTALL=1 # nothing is downloaded: the GPU machine may be offline
# Preallocation off, so the memory sampled below is what the runs used rather than XLA's reservation.
export PROTOLAB_XLA_OPTIONS=${PROTOLAB_XLA_OPTIONS:-preallocate=false}

say "host $(hostname), $(nproc) CPUs, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
ngpu=0
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L | tee -a "$summary"
  ngpu=$(nvidia-smi -L | grep -c '^GPU ')
  nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader | sed 's/^/device_check: driver, memory: /' | tee -a "$summary"
else
  say "no nvidia-smi: no NVIDIA GPU visible"
fi

# 1. The plugin.
"$bin" backend >"$out/backend.log" 2>&1
cat "$out/backend.log"
if [[ -z ${GOMLX_BACKEND:-} ]] && ! grep -q '^backend: xla' "$out/backend.log"; then
  plugin=$(find "${DEVICE_CHECK_SEARCH_ROOT:-/}" -xdev \( -name 'pjrt_c_api_cuda*_plugin.so' -o -name 'xla_cuda_plugin.so' -o -name 'pjrt_c_api_cpu_plugin.so' \) \
    -not -path '/proc/*' 2>/dev/null | sort | head -1)
  if [[ -z $plugin ]]; then
    say "no PJRT plugin on this machine (ProtoLab's search and a search of the disk found none): GPU path NOT exercised"
    say "install one (bin/device/protolab backend --install, online) or copy a plugin .so here and set GOMLX_BACKEND=xla:/abs/path.so"
    exit 3
  fi
  export GOMLX_BACKEND=xla:$plugin
  say "plugin found outside ProtoLab's search: GOMLX_BACKEND=$GOMLX_BACKEND"
fi
xla_backend=${GOMLX_BACKEND:-}
if [[ -n $xla_backend ]]; then say "backend for the XLA runs: GOMLX_BACKEND=$xla_backend"
else say "backend for the XLA runs: ProtoLab's choice, $(grep '^backend:' "$out/backend.log")"; fi

# 2. Start it and check a computation.
check backend_check "$bin" backend --check || { say "the XLA backend does not start: stopping"; exit 1; }
rehearsal=0
if [[ ${xla_backend:-} == go* ]]; then
  rehearsal=1 # GOMLX_BACKEND=go:…: the script's own rehearsal on a CPU machine
  say "REHEARSAL: GOMLX_BACKEND=$xla_backend stands in for XLA; the GPU path is NOT exercised"
elif ! grep -q '^started: xla' "$out/backend_check.log"; then
  say "FAIL the backend started is not XLA"; failed=1
fi
gpu_used=0
if grep -qiE '^started: xla:.*(cuda|nvidia)' "$out/backend_check.log"; then gpu_used=1; fi

# 3. The Tiny LM under both backends.
steps=${DEVICE_CHECK_STEPS:-30}
check train_xla "$bin" train --preset tiny --set "train.steps=$steps" --out "$out/tiny_xla"
GOMLX_BACKEND=go:parallelism=-1 check train_go "$bin" train --preset tiny --set "train.steps=$steps" --out "$out/tiny_go"
check eval_go_weights_on_xla sh -c "'$bin' eval --out '$out/tiny_go' >'$out/eval_xla.json'"
GOMLX_BACKEND=go:parallelism=-1 check eval_go_weights_on_go sh -c "'$bin' eval --out '$out/tiny_go' >'$out/eval_go.json'"
check compare_losses python3 - "$out" <<'EOF'
import json, sys
out = sys.argv[1]
def hist(run):
    h = json.load(open(f"{out}/{run}/result.json"))["history"]["steps"]
    return h[0]["loss"], h[-1]["loss"], h[-1].get("tokens_per_sec", 0)
for run in ("tiny_xla", "tiny_go"):
    first, last, tps = hist(run)
    print(f"{run}: loss at step 1 {first:.5f}, at the last step {last:.5f}, {tps:,.0f} tokens/s")
x = json.load(open(f"{out}/eval_xla.json"))["loss"]
g = json.load(open(f"{out}/eval_go.json"))["loss"]
rel = abs(x - g) / abs(g)
print(f"the go-trained weights' validation loss: XLA {x:.7f}, go {g:.7f}, relative difference {rel:.2e} (limit 1e-3)")
sys.exit(0 if rel < 1e-3 else 1)
EOF

# 4. The throughput bench at the Small preset, GPU memory sampled.
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$out/gpu_memory_mib.txt" 2>/dev/null &
  sampler=$!
fi
timecmd=()
if [[ -x /usr/bin/time ]]; then timecmd=(/usr/bin/time -v); fi
read -r -a bench_args <<<"${DEVICE_CHECK_BENCH_ARGS:---preset small}"
check bench_small timeout "${DEVICE_CHECK_BENCH_TIMEOUT:-420}" "${timecmd[@]}" "$bin" bench throughput "${bench_args[@]}" \
  --out "$out/bench"
if [[ -n ${sampler:-} ]]; then
  kill "$sampler" 2>/dev/null
  say "peak GPU memory used during the bench: $(sort -n "$out/gpu_memory_mib.txt" | tail -1) MiB (sampled every 200 ms)"
fi
grep -E 'Maximum resident set size' "$out/bench_small.log" | sed 's/^\s*/device_check: host /' | tee -a "$summary"

# 5. Data parallelism over two devices, and a sweep as one process per device.
if ((ngpu >= 2)); then
  check fit_several_devices sh -c "cd '$root/workbench/fit' && '$(dirname "$bin")/fit.test' -test.count=1 -test.v \
    -test.run 'TestDevices_SeveralDevicesMatchOne' 2>&1 | tail -30 | tee /dev/stderr | grep -q -- '--- PASS: TestDevices_SeveralDevicesMatchOne'"
  check launch_per_device "$bin" launch --devices 0,1 -- "$bin" backend --check ::: a b
  check train_xla_2devices "$bin" train --preset tiny --set "train.steps=$steps;train.devices=2" --out "$out/tiny_xla_2dev"
  check compare_2devices python3 - "$out" <<'EOF'
import json, sys
out = sys.argv[1]
one = json.load(open(f"{out}/tiny_xla/result.json"))["history"]["steps"]
two = json.load(open(f"{out}/tiny_xla_2dev/result.json"))["history"]["steps"]
rel = abs(one[0]["loss"] - two[0]["loss"]) / abs(one[0]["loss"])
print(f"step-1 loss: one device {one[0]['loss']:.6f}, two devices {two[0]['loss']:.6f}, relative difference {rel:.2e} (limit 1e-4)")
sys.exit(0 if rel < 1e-4 else 1)
EOF
else
  say "$ngpu GPU(s): data parallelism over several devices not checked (needs two or more)"
fi

if [[ -n ${OUT:-} && -d ${OUT:-} ]]; then cp -r "$out" "$OUT/" 2>/dev/null; fi
if [[ $failed != 0 ]]; then say "some checks FAILED"
elif ((rehearsal)); then say "all checks passed in a rehearsal on the go backend: the GPU path was NOT exercised"
elif ((gpu_used)); then say "all checks passed on a CUDA plugin: the GPU path was exercised"
else say "all checks passed on XLA without a CUDA plugin: the XLA path was exercised, the GPU path was not"; fi
exit $failed
