#!/usr/bin/env python3
"""PyTorch counterpart of the speed study's training-throughput rows (experiments/speed, issue #18).

It times full training steps (forward, cross-entropy, backward, global-norm clipping, AdamW) of the *same* decoder
the Go row trains: the model is models/lm/pytorch/protolab_lm.py's ProtoLabLM built from the architecture metadata
of a `protolab export` file (--export; its weights), or from the architecture the Go speed result records for the
row (--go-result with --label; speed.Result.Architectures, with weights for timing only), so width, layers, heads,
FFN, vocabulary, norm and tying are the Go model's (the weights do not change the speed). The protocol is the speed
study's (models/timing/train.go): one fixed batch of B = token_budget / T rows of T + 1 uniform random tokens,
`warmup` untimed steps, then `steps` timed ones; tokens/s is the median over the timed steps of B·T / step time,
tokens per CPU-second is B·T·steps / the process's CPU seconds (resource.getrusage) over the timed steps, and
timing stops after the first timed step that ends past max_seconds since the configuration started.
GFLOP/s uses the Go row's FLOPs per token (train_flops_per_token, theory/cost's matrix products, 3x the forward),
read from the Go result (--go-result) or given (--flops-per-token), so both sides divide the same work by their
time. Peak memory is the process's ru_maxrss, so each (model, T) runs in a fresh child process.

Differences from the Go model that this measures, not hides: protolab_lm.py computes attention in the dense T x T
form (Go: attention.kind=full or chunked), ProtoT's read with dense [R, T, T] decay matrices (Go: chunks of
protot.chunk_size), and DeltaNet and Mamba token by token (far too slow at these contexts; they run, but are not
part of the study's table). The optimizer's decay group follows workbench/fit (rank >= 2, minus the decoder's
NoDecay names); it does not affect the speed.

Exit status: 0, 2 when the parity check fails, 3 when this python3 cannot import torch. Typical use (README, "PyTorch
beside the speed study", gives the recipe for the export of the speed study's decoder):

    python3 scripts/torch_throughput.py --export at.safetensors --label attention --contexts 1024,4096,8192 \
        --go-result out/speed/<run>/result.json --parity at_parity.json --out out/speed/torch/attention.json

--parity FILE checks first that the torch model's mean next-token loss on FILE's "tokens" [B][T+1] equals FILE's
"loss" (the Go model's, lm.Model.TokenLosses) to 1e-5 relative, and stops with status 2 when it does not.
"""

import argparse
import datetime
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "models", "lm", "pytorch"))

# Path elements exempt from weight decay: decoder.Config.NoDecay (norm scopes, protot.NoDecay, mamba's); a
# variable also never decays when its rank is <= 1 (workbench/fit Config.Decays).
NO_DECAY = ("attn_norm", "ffn_norm", "final_norm", "prototypes", "decay_logit", "write_temp", "read_temp", "alpha",
            "dt_proj", "a_log")

PARITY_RTOL = 1e-5  # float32 loss of two implementations summing in different orders


def decays(name, rank):
    """workbench/fit's rule: rank >= 2 and no path element equal to (or ending in "_" +) a NO_DECAY entry."""
    if rank <= 1:
        return False
    for part in name.split("."):
        for s in NO_DECAY:
            if part == s or part.endswith("_" + s):
                return False
    return True


def rss_mb(field="VmRSS"):
    """The process's resident set (VmRSS) or its high-water mark (VmHWM) in MiB from /proc, 0 where absent."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def machine(threads):
    import torch

    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    mem_gb = 0.0
    try:
        with open("/proc/meminfo") as f:
            mem_gb = int(next(l for l in f if l.startswith("MemTotal")).split()[1]) / (1 << 20)
    except (OSError, StopIteration):
        pass
    return {"host": platform.node(), "platform": platform.platform(), "cpu": cpu, "num_cpu": os.cpu_count(),
            "blas": blas_libraries(),
            "mem_gb": round(mem_gb, 1), "python": platform.python_version(), "torch": torch.__version__,
            "threads": threads, "torch_num_threads": torch.get_num_threads(),
            "torch_interop_threads": torch.get_num_interop_threads()}


def blas_libraries():
    """The BLAS/LAPACK libraries this process has mapped after a matrix product (Debian's torch takes whichever
    libblas.so.3 the alternatives system selects: the reference BLAS, or OpenBLAS when installed)."""
    import torch

    torch.ones(64, 64) @ torch.ones(64, 64)
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                name = os.path.basename(path).lower()
                if any(k in name for k in ("blas", "lapack", "mkl")):
                    libs.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(libs)


def load_model(path):
    import torch
    from protolab_lm import load

    model = load(path)
    for p in model.parameters():
        p.requires_grad_(True)  # protolab_lm registers inference-only parameters
    return model.train(), model.arch, torch


def go_architecture(path, label):
    """The architecture the Go speed result (--go-result) records for the row label (speed.Result.Architectures)."""
    with open(path) as f:
        res = json.load(f)
    res = res.get("value", res)  # a stored result is {"key": ..., "value": Result}
    arch = (res.get("architectures") or {}).get(label)
    if arch is None:
        raise SystemExit("torch_throughput: %s records no architecture for %r (it has %s); rerun the speed study with "
                         "this version, or give --export" % (path, label, sorted(res.get("architectures") or {})))
    return arch


def init_model(arch, seed):
    """ProtoLabLM(arch) with weights for timing only: N(0, 0.02) for every matrix and higher-rank tensor, 1 for
    vectors and scalars (gains, temperatures, masks, biases), so every value is finite and normal (no NaN, no
    denormals, which would change the speed); the speed does not depend on the values otherwise."""
    import torch
    from protolab_lm import ProtoLabLM

    model = ProtoLabLM(arch)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype) * 0.02)
            else:
                p.fill_(1.0)
            p.requires_grad_(True)
    return model.train(), arch, torch


def build_model(a):
    """The timed model: the export's (--export), else the one the Go result records for the label (--go-result)."""
    if a.export:
        return load_model(a.export)
    return init_model(go_architecture(a.go_result, a.label), a.seed)


def loss_of(model, batch, V):
    import torch.nn.functional as F

    logits = model(batch[:, :-1])  # [B, T, V]
    return F.cross_entropy(logits.reshape(-1, V), batch[:, 1:].reshape(-1))


def check_parity(export, path):
    """The torch model's mean loss on the parity file's tokens against the Go model's loss in it."""
    import torch

    with open(path) as f:
        p = json.load(f)
    model, arch, _ = load_model(export)
    tokens = torch.tensor(p["tokens"], dtype=torch.int64)
    with torch.no_grad():
        got = float(loss_of(model, tokens, arch["vocab_size"]))
    want = float(p["loss"])
    rel = abs(got - want) / max(abs(want), 1e-30)
    return {"file": path, "batch": list(tokens.shape), "go_loss": want, "torch_loss": got, "rel_diff": rel,
            "rtol": PARITY_RTOL, "ok": rel <= PARITY_RTOL}


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def quantile(xs, q):
    """Linear interpolation between order statistics (numpy's default)."""
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    h = (len(s) - 1) * q
    lo = math.floor(h)
    return s[lo] + (h - lo) * (s[min(lo + 1, len(s) - 1)] - s[lo])


def train_one(a):
    """One configuration in this (child) process: returns its row."""
    import torch

    torch.set_num_threads(a.threads)
    model, arch, _ = build_model(a)
    V, T = arch["vocab_size"], a.t
    B = max(1, a.token_budget // T)
    tokens = B * T
    row = {"mixer": a.label, "form": form_of(arch), "t": T, "batch": B, "train_flops_per_token": a.flops_per_token,
           "num_params": sum(p.numel() for p in model.parameters()), "load_start": os.getloadavg()[0]}
    params = dict(model.named_parameters())
    groups = [{"params": [p for n, p in params.items() if decays(n, p.dim())], "weight_decay": a.weight_decay},
              {"params": [p for n, p in params.items() if not decays(n, p.dim())], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=a.lr, betas=(0.9, 0.95), eps=1e-8)
    g = torch.Generator().manual_seed(a.seed * 1_000_003 + T)
    batch = torch.randint(0, V, (B, T + 1), generator=g, dtype=torch.int64)
    row["base_mb"] = rss_mb()

    start = time.perf_counter()
    steps, cpu_timed, cpu_mark = [], 0.0, cpu_seconds()
    for step in range(1, a.warmup + a.steps + 1):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_of(model, batch, V)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip_norm)
        opt.step()
        lv = float(loss)  # synchronises, as the Go step returns its loss
        dt = time.perf_counter() - t0
        now = cpu_seconds()
        if step > a.warmup:
            steps.append(dt)
            cpu_timed += now - cpu_mark
            row["loss"] = lv
            if a.max_seconds > 0 and time.perf_counter() - start > a.max_seconds and step < a.warmup + a.steps:
                row["note"] = "%d of %d timed steps (max_seconds=%g)" % (len(steps), a.steps, a.max_seconds)
                break
        cpu_mark = now
    per_step = [tokens / s for s in steps]
    row.update({
        "step_seconds": steps,
        "tokens_per_sec": median(per_step),
        "spread": {"min": min(per_step), "q1": quantile(per_step, 0.25), "median": median(per_step),
                   "q3": quantile(per_step, 0.75), "max": max(per_step)},
        "cpu_seconds_timed": cpu_timed,
        "tokens_per_cpu_sec": tokens * len(steps) / cpu_timed if cpu_timed > 0 else 0.0,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KiB on Linux
        "load_end": os.getloadavg()[0],
    })
    if a.flops_per_token:
        row["gflops_per_sec"] = a.flops_per_token * row["tokens_per_sec"] / 1e9
        row["gflops_per_cpu_sec"] = a.flops_per_token * row["tokens_per_cpu_sec"] / 1e9
    return row


def form_of(arch):
    """How protolab_lm.py computes the mixer (it has one form per mixer)."""
    return {"attention": "dense", "protot": "dense", "deltanet": "recurrent", "mamba": "recurrent"}[arch["mixer"]]


def go_flops(path, label, T):
    """train_flops_per_token of the Go speed row (mixer, T); a torch "attention" row (dense) takes the full form's
    count, which the Go result holds even for a skipped row."""
    with open(path) as f:
        res = json.load(f)
    res = res.get("value", res)  # a stored result is {"key": ..., "value": Result}
    for r in res.get("throughput") or []:
        if r.get("mixer") == label and r.get("t") == T:
            return r.get("train_flops_per_token", 0.0)
    return 0.0


def run_child(a, T, flops):
    """Runs train_one for T in a fresh process (its own ru_maxrss), under an address-space limit."""
    source = ["--export", a.export] if a.export else ["--go-result", a.go_result]
    cmd = [sys.executable, os.path.abspath(__file__), "--child"] + source + ["--label", a.label,
           "--t", str(T), "--token-budget", str(a.token_budget), "--steps", str(a.steps), "--warmup", str(a.warmup),
           "--threads", str(a.threads), "--seed", str(a.seed), "--max-seconds", str(a.max_seconds),
           "--max-memory-gb", str(a.max_memory_gb), "--flops-per-token", repr(flops)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode == 0:
        return json.loads(p.stdout.strip().splitlines()[-1])
    err = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
    B = max(1, a.token_budget // T)
    reason = err
    if "alloc" in err.lower() or "memory" in err.lower() or p.returncode in (-9, 137):
        reason = "out of memory under max_memory_gb=%g (address-space limit): %s" % (a.max_memory_gb, err)
    return {"mixer": a.label, "t": T, "batch": B, "skipped": reason, "train_flops_per_token": flops}


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--export", help="a `protolab export` safetensors file of the row's decoder (else the "
                    "architecture --go-result records for --label, with weights for timing only)")
    ap.add_argument("--label", help="the row's mixer name in the Go result (default: the export's mixer)")
    ap.add_argument("--contexts", default="256,1024,4096,8192", help="context lengths T, comma-separated")
    ap.add_argument("--token-budget", type=int, default=4096, help="B*T, tokens per step (speed: token_budget)")
    ap.add_argument("--steps", type=int, default=10, help="timed steps (speed: steps)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first (speed: warmup)")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3, help="as the speed study's fit config")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--clip-norm", type=float, default=1.0)
    ap.add_argument("--max-seconds", type=float, default=600, help="stop timing past this (speed: max_seconds)")
    ap.add_argument("--max-memory-gb", type=float, default=18,
                    help="address-space limit of each child; a configuration over it is recorded as skipped")
    ap.add_argument("--go-result", help="the Go speed result JSON to read train_flops_per_token from")
    ap.add_argument("--flops-per-token", type=float, default=0.0, help="FLOPs per token when no --go-result")
    ap.add_argument("--parity", help="a JSON file {tokens, loss} with the Go model's loss (checked first)")
    ap.add_argument("--out", help="result JSON (default out/speed/torch/<label>.json)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--t", type=int, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv):
    a = parse(argv)
    if not a.export and not (a.go_result and a.label):
        print("torch_throughput: give --export FILE, or --go-result RESULT with --label MIXER (the speed result's "
              "recorded architecture)", file=sys.stderr)
        return 2
    if a.child:
        lim = int(a.max_memory_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        print(json.dumps(train_one(a)))
        return 0
    try:
        import torch
    except ImportError as e:
        print("torch_throughput: %s cannot import torch (%s); install Debian's python3-torch and run it with "
              "/usr/bin/python3" % (sys.executable, e), file=sys.stderr)
        return 3
    torch.set_num_threads(a.threads)
    model, arch, _ = build_model(a)
    a.label = a.label or arch["mixer"]
    del model
    if a.parity and not a.export:
        print("torch_throughput: --parity needs --export (the weights the Go loss was computed with)", file=sys.stderr)
        return 2
    out = a.out or os.path.join(REPO, "out", "speed", "torch", a.label + ".json")
    res = {"tool": "scripts/torch_throughput.py", "export": os.path.abspath(a.export) if a.export else None,
           "go_result": os.path.abspath(a.go_result) if a.go_result else None, "label": a.label,
           "architecture": arch, "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
           "machine": machine(a.threads), "load_start": list(os.getloadavg()),
           "config": {k: v for k, v in vars(a).items() if k not in ("child", "t")}, "rows": []}
    if a.parity:
        res["parity"] = check_parity(a.export, a.parity)
        p = res["parity"]
        print("parity: go loss %.7f, torch loss %.7f, rel diff %.2e (%s)" % (
            p["go_loss"], p["torch_loss"], p["rel_diff"], "ok" if p["ok"] else "MISMATCH"), flush=True)
        if not p["ok"]:
            return 2
    for T in [int(x) for x in a.contexts.split(",") if x]:
        flops = go_flops(a.go_result, a.label, T) if a.go_result else a.flops_per_token
        row = run_child(a, T, flops)
        res["rows"].append(row)
        if row.get("skipped"):
            print("%-10s T=%-6d skipped: %s" % (a.label, T, row["skipped"]), flush=True)
        else:
            print("%-10s T=%-6d B=%-4d %9.0f tokens/s %9.0f tokens/cpu-s %7.2f GFLOP/s peak %6.0f MB load %.2f"
                  % (a.label, T, row["batch"], row["tokens_per_sec"], row["tokens_per_cpu_sec"],
                     row.get("gflops_per_sec", 0.0), row["peak_mb"], row["load_start"]), flush=True)
        res["load_end"] = list(os.getloadavg())
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(res, f, indent=1)
        os.replace(tmp, out)
    print("wrote", out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
