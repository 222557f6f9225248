#!/usr/bin/env bash
# Go against PyTorch on the same decoder, the same training step and the same machine, alternated: the peer ratio of
# the speed study. Each round times the Go step (`protolab bench throughput`: fit's step, i.e. forward, backward,
# global-norm clipping and AdamW, 3 warm-up steps then the median of 10 timed ones) and the PyTorch step
# (scripts/torch_throughput.py: the same protocol, the model built from the architecture the Go result records, 2
# threads) one after the other, Go first in odd rounds and PyTorch first in even ones, so that a drift of the machine
# falls on both. The ratio is taken round by round (Go tokens/s ÷ PyTorch tokens/s, wall clock and per CPU-second) and
# summarised by its median and range over the rounds, in DIR/summary.json and DIR/summary.md.
#
# usage: bash scripts/peer_throughput.sh --label MIXER --ctx T --set "speed keys" [--rounds K] [--steps N]
#            [--warmup N] [--out DIR] [--bin PROTOLAB]
#   --label   the speed study's mixer (attention, protot; PyTorch's DeltaNet and Mamba run token by token and are not
#             a peer)
#   --ctx     the context T; --set takes `protolab keys speed` keys (width, num_layers, vocab, token_budget, ...)
#   --bin     a protolab binary (default: built here with `go build -tags noxla`, GOEXPERIMENT=simd)
# The configurations the closing notes and README quote (recipes in README, "PyTorch beside the speed study"):
#   baseline  --label attention --ctx 256
#             --set 'width=128;num_layers=4;vocab=2048;token_budget=2048;attention.num_heads=4'
#   Small     --label attention|protot --ctx 256 (the speed study's Small decoder)
# Exit status: 0; 1 on a failed run; 2 on bad arguments; 3 when no python3 imports torch.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
label="" ctx="" set="" rounds=5 steps=10 warmup=3 out="" bin=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --label) label=$2; shift 2 ;;
    --ctx) ctx=$2; shift 2 ;;
    --set) set=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "peer_throughput: unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[[ -n $label && -n $ctx ]] || { echo "peer_throughput: --label and --ctx are required" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "peer_throughput: --rounds $rounds, want a positive integer" >&2; exit 2; }
py=""
for c in /usr/bin/python3 python3; do
  if command -v "$c" >/dev/null && "$c" -c "import torch" 2>/dev/null; then py=$c; break; fi
done
[[ -n $py ]] || { echo "peer_throughput: no python3 imports torch (make setup-torch)" >&2; exit 3; }
out=${out:-$root/out/peer/$label-T$ctx}
mkdir -p "$out"
out=$(cd "$out" && pwd)
export GOEXPERIMENT=simd GOMLX_NO_AUTO_INSTALL=1
if [[ -z $bin ]]; then
  bin=$out/protolab
  (cd "$root" && go build -tags noxla -o "$bin" ./experiments/cmd/protolab)
fi
keys="steps=$steps;warmup=$warmup${set:+;$set}"

go_round() { # $1 = round; prints nothing, writes $out/go-$1.path
  "$bin" bench throughput --preset small --set "$keys" --mixers "$label" --ctx "$ctx" --out "$out/go-$1" \
    >"$out/go-$1.log" 2>&1 ||
    { cat "$out/go-$1.log" >&2; echo "peer_throughput: the Go run of round $1 failed" >&2; exit 1; }
  sed -n 's/^results in //p' "$out/go-$1.log" | tail -1 >"$out/go-$1.path"
  last_go=$(cat "$out/go-$1.path")
}
torch_round() { # $1 = round
  tb=$("$py" -c 'import json, sys; r = json.load(open(sys.argv[1])); r = r.get("value", r)
print(r["provenance"]["config"]["token_budget"])' "$last_go")
  "$py" "$root/scripts/torch_throughput.py" --go-result "$last_go" --label "$label" --contexts "$ctx" \
    --token-budget "$tb" --steps "$steps" --warmup "$warmup" --out "$out/torch-$1.json" >"$out/torch-$1.log" 2>&1 ||
    { cat "$out/torch-$1.log" >&2; echo "peer_throughput: the PyTorch run of round $1 failed" >&2; exit 1; }
}
last_go=""
for ((i = 1; i <= rounds; i++)); do
  if ((i % 2 == 1)) || [[ -z $last_go ]]; then go_round "$i"; torch_round "$i"; else torch_round "$i"; go_round "$i"; fi
  echo "peer_throughput: round $i of $rounds done"
done

"$py" - "$out" "$rounds" "$label" "$ctx" <<'EOF'
import json, os, statistics, sys
out, rounds, label, T = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
def go_row(i):
    r = json.load(open(open(os.path.join(out, "go-%d.path" % i)).read().strip()))
    r = r.get("value", r)
    row = next(x for x in r["throughput"] if x["mixer"] == label and x["t"] == T)
    return row, r["machine"], r["provenance"]
def torch_row(i):
    r = json.load(open(os.path.join(out, "torch-%d.json" % i)))
    return next(x for x in r["rows"] if x["t"] == T), r["machine"]
rows = []
for i in range(1, rounds + 1):
    g, machine, prov = go_row(i)
    t, tmachine = torch_row(i)
    if g.get("skipped") or t.get("skipped"):
        sys.exit("peer_throughput: round %d has a skipped row: %s" % (i, g.get("skipped") or t.get("skipped")))
    rows.append({"round": i, "first": "go" if i % 2 == 1 else "torch",
                 "go_tokens_per_sec": g["tokens_per_sec"], "torch_tokens_per_sec": t["tokens_per_sec"],
                 "go_tokens_per_cpu_sec": g["tokens_per_cpu_sec"], "torch_tokens_per_cpu_sec": t["tokens_per_cpu_sec"],
                 "go_gflops_per_sec": g["gflops_per_sec"], "go_roof_fraction": g["roof_fraction"],
                 "matmul_roof_gflops": machine["roof_gflops"],
                 "ratio": g["tokens_per_sec"] / t["tokens_per_sec"],
                 "ratio_cpu": (g["tokens_per_cpu_sec"] / t["tokens_per_cpu_sec"]) if t["tokens_per_cpu_sec"] else 0})
def summary(key):
    xs = [r[key] for r in rows]
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}
res = {"tool": "scripts/peer_throughput.sh", "label": label, "t": T, "batch": g["batch"],
       "train_flops_per_token": g["train_flops_per_token"], "go_backend": machine["backend"],
       "go_simd": prov.get("simd"), "gomlx_version": prov.get("gomlx_version"), "git_commit": prov.get("git_commit"),
       "torch": tmachine["torch"], "torch_threads": tmachine["torch_num_threads"], "torch_blas": tmachine.get("blas"),
       "cpu": tmachine["cpu"], "num_cpu": tmachine["num_cpu"], "rounds": rows,
       "ratio": summary("ratio"), "ratio_cpu": summary("ratio_cpu"),
       "go_tokens_per_sec": summary("go_tokens_per_sec"), "torch_tokens_per_sec": summary("torch_tokens_per_sec"),
       "go_gflops_per_sec": summary("go_gflops_per_sec"), "go_roof_fraction": summary("go_roof_fraction")}
tmp = os.path.join(out, "summary.json.tmp")
json.dump(res, open(tmp, "w"), indent=1)
os.replace(tmp, os.path.join(out, "summary.json"))
lines = ["# Go against PyTorch: %s, T = %d, B = %d (%d rounds, alternated)" % (label, T, g["batch"], rounds), "",
         "Go: %s (SIMD: %s), gomlx %s, commit %s. PyTorch %s, %d threads, BLAS %s. CPU: %s, %d cores." % (
             res["go_backend"], res["go_simd"], res["gomlx_version"], res["git_commit"], res["torch"],
             res["torch_threads"], ", ".join(os.path.basename(b) for b in res["torch_blas"] or []) or "unknown",
             res["cpu"], res["num_cpu"]), "",
         "| round | first | Go tokens/s | PyTorch tokens/s | ratio | Go tokens/cpu-s | PyTorch tokens/cpu-s "
         "| ratio (CPU) | Go GFLOP/s | roof |",
         "|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    lines.append("| %d | %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.1f | %.0f%% of %.0f |" % (
        r["round"], r["first"], r["go_tokens_per_sec"], r["torch_tokens_per_sec"], r["ratio"],
        r["go_tokens_per_cpu_sec"], r["torch_tokens_per_cpu_sec"], r["ratio_cpu"], r["go_gflops_per_sec"],
        100 * r["go_roof_fraction"], r["matmul_roof_gflops"]))
s, c = res["ratio"], res["ratio_cpu"]
lines += ["", "Ratio Go/PyTorch (wall): median %.2f (range %.2f–%.2f); per CPU-second: median %.2f (%.2f–%.2f)." % (
    s["median"], s["min"], s["max"], c["median"], c["min"], c["max"])]
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
