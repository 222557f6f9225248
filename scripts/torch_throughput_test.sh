#!/usr/bin/env bash
# Tests scripts/torch_throughput.py at a tiny size: trains a Tiny decoder for one step with the protolab CLI, exports
# it, runs the script at T = 16 and 32 (one warm-up and two timed steps) with the FLOPs per token read from a fake Go
# speed result, and checks the result JSON's fields (machine, load, torch version and threads; each row's tokens/s,
# tokens per CPU-second, GFLOP/s = FLOPs/token × tokens/s / 1e9 and peak RSS), then that a parity file whose loss
# disagrees stops it with status 2. Skips (status 0, reason printed) when go is missing or no python3 imports torch
# (Debian's python3-torch). Then scripts/peer_throughput.sh for two alternated rounds at a tiny size: the PyTorch
# model built from the architecture the Go result records (--go-result), and its summary's round-by-round ratios.
# About a minute. Usage: bash scripts/torch_throughput_test.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=""
for c in /usr/bin/python3 python3; do
  if command -v "$c" >/dev/null && "$c" -c "import torch" 2>/dev/null; then py=$c; break; fi
done
if [[ -z $py ]]; then echo "SKIP torch_throughput_test: no python3 imports torch (install Debian's python3-torch)"; exit 0; fi
if ! command -v go >/dev/null; then echo "SKIP torch_throughput_test: go is not installed (the test exports a model)"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOMLX_BACKEND=${GOMLX_BACKEND:-go:parallelism=-1} GOMLX_NO_AUTO_INSTALL=1
fail() { echo "FAIL torch_throughput_test: $*"; exit 1; }

(cd "$root" && go build -tags noxla -o "$tmp/protolab" ./experiments/cmd/protolab) || fail "building protolab"
"$tmp/protolab" train --preset tiny --set 'model.mixer="attention";model.num_layers=1;train.steps=1;train.warmup_steps=0;train.eval_every=0;train.checkpoint_every=0' \
  --out "$tmp/run" >"$tmp/train.log" 2>&1 || { cat "$tmp/train.log"; fail "protolab train"; }
"$tmp/protolab" export --out "$tmp/run" --to "$tmp/m.safetensors" >/dev/null || fail "protolab export"
echo '{"throughput": [{"mixer": "attention", "t": 16, "train_flops_per_token": 2e6}, {"mixer": "attention", "t": 32, "train_flops_per_token": 3e6}]}' >"$tmp/go.json"

"$py" "$root/scripts/torch_throughput.py" --export "$tmp/m.safetensors" --contexts 16,32 --token-budget 32 \
  --steps 2 --warmup 1 --go-result "$tmp/go.json" --out "$tmp/torch.json" || fail "the script exited $?"
"$py" - "$tmp/torch.json" <<'EOF' || fail "result fields"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("torch", "threads", "torch_num_threads", "num_cpu", "cpu"):
    assert k in r["machine"], k
assert r["machine"]["torch_num_threads"] == 2, r["machine"]
assert len(r["load_start"]) == 3 and len(r["load_end"]) == 3
assert r["label"] == "attention" and r["architecture"]["num_layers"] == 1
want = {16: (2, 2e6), 32: (1, 3e6)}
assert [row["t"] for row in r["rows"]] == [16, 32], r["rows"]
for row in r["rows"]:
    B, flops = want[row["t"]]
    assert not row.get("skipped"), row
    assert row["batch"] == B and row["form"] == "dense" and len(row["step_seconds"]) == 2, row
    assert row["tokens_per_sec"] > 0 and row["tokens_per_cpu_sec"] > 0 and row["peak_mb"] > 0, row
    assert row["train_flops_per_token"] == flops, row
    assert abs(row["gflops_per_sec"] - flops * row["tokens_per_sec"] / 1e9) <= 1e-9 * row["gflops_per_sec"], row
    assert row["spread"]["min"] <= row["tokens_per_sec"] <= row["spread"]["max"], row
    assert row["loss"] > 0 and row["load_start"] >= 0, row
print("fields ok")
EOF

echo '{"tokens": [[1, 2, 3, 4, 5]], "loss": 123.0}' >"$tmp/parity.json"
"$py" "$root/scripts/torch_throughput.py" --export "$tmp/m.safetensors" --contexts 16 --parity "$tmp/parity.json" \
  --out "$tmp/bad.json" >"$tmp/bad.log" 2>&1
rc=$?
[[ $rc == 2 ]] || { cat "$tmp/bad.log"; fail "a failed parity check exited $rc, want 2"; }
grep -q MISMATCH "$tmp/bad.log" || fail "a failed parity check does not say MISMATCH"
# The peer ratio: alternated rounds, PyTorch's model from the Go result's architecture.
bash "$root/scripts/peer_throughput.sh" --bin "$tmp/protolab" --label attention --ctx 16 --rounds 2 --steps 2 --warmup 1 \
  --set 'width=32;num_layers=1;vocab=64;token_budget=32;attention.num_heads=2' --out "$tmp/peer" >"$tmp/peer.log" 2>&1 ||
  { cat "$tmp/peer.log"; fail "peer_throughput.sh"; }
"$py" - "$tmp/peer/summary.json" "$tmp/peer/torch-1.json" <<'EOF' || fail "peer summary"
import json, sys
s, t = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert s["label"] == "attention" and s["t"] == 16 and s["batch"] == 2, s
assert [r["first"] for r in s["rounds"]] == ["go", "torch"], s["rounds"]
for r in s["rounds"]:
    assert abs(r["ratio"] - r["go_tokens_per_sec"] / r["torch_tokens_per_sec"]) <= 1e-12 * r["ratio"], r
    assert 0 < r["go_roof_fraction"] and r["go_gflops_per_sec"] > 0, r
ratios = sorted(r["ratio"] for r in s["rounds"])
assert s["ratio"]["min"] == ratios[0] and s["ratio"]["max"] == ratios[-1] and s["ratio"]["n"] == 2, s["ratio"]
a = t["architecture"]
assert t["export"] is None and a["width"] == 32 and a["num_layers"] == 1 and a["vocab_size"] == 64, a
assert a["attention"]["num_heads"] == 2 and s["torch_blas"] is not None, (a, s)
print("peer ok")
EOF
echo "PASS torch_throughput_test"
