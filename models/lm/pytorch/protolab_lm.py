"""Load a `protolab export` file into PyTorch and compute the workbench's logits.

Plain PyTorch (>= 1.10; Debian's python3-torch 1.13 works), no other dependency: the safetensors file is read
with the standard library. The layout, the names and the metadata are documented in models/lm/doc.go
("PyTorch export"); this module is that documentation as code.

    from protolab_lm import load
    model = load("model.safetensors")          # a ProtoLabLM (torch.nn.Module), in eval mode
    logits = model(torch.tensor([[1, 2, 3]]))  # [B, T] int64 -> [B, T, V]

Every mixer the workbench trains is supported (attention, protot, deltanet, mamba), under the dense head or the
PRISM head. The module's state_dict keys are the export's tensor names, so `load` checks with
load_state_dict(strict=True) that the file holds exactly the model's tensors. Recurrences (DeltaNet, Mamba)
run token by token and ProtoT's memory uses its dense T x T form: slow for long sequences, written to be read.

Command line (used by the Go parity test, models/lm/export_test.go):

    python3 protolab_lm.py FILE.safetensors [FILE2.safetensors ...] --tokens "1,2,3;4,5,6" [--out logits.json]

prints (or writes) {"logits": {"FILE.safetensors": [[[...]]], ...}, "reconstruction": {...}}: each file's logits
[B][T][V] for the rows of --tokens and, for a PRISM model, its reconstruction z_hat [B][T][D] (one process for
several files: importing torch is the slow part).
"""

import json
import math
import struct
import sys

import torch
import torch.nn.functional as F
from torch import nn

FORMAT = "protolab.export/v1"

_DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
    "BOOL": torch.bool,
}


def read_safetensors(path):
    """Returns ({name: tensor}, {key: str}) of a safetensors file (little-endian host)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    base = 8 + n
    out = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        dtype = _DTYPES[e["dtype"]]
        buf = bytearray(data[base + begin:base + end])
        t = torch.frombuffer(buf, dtype=dtype) if buf else torch.empty(0, dtype=dtype)
        out[name] = t.reshape(e["shape"]).clone()
    return out, meta


def rms_norm(x, gain, eps):
    """x / sqrt(mean(x^2) + eps) * gain over the last axis (layers/decoder eq. 2)."""
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gain


def _param(module, name, shape, dtype):
    module.register_parameter(name, nn.Parameter(torch.zeros(shape, dtype=dtype), requires_grad=False))


class Norm(nn.Module):
    def __init__(self, D, dtype):
        super().__init__()
        _param(self, "gain", (D,), dtype)


class FFN(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x)); gate, up [F, D], down [D, F] (nn.Linear layout)."""

    def __init__(self, D, Fh, dtype):
        super().__init__()
        _param(self, "gate", (Fh, D), dtype)
        _param(self, "up", (Fh, D), dtype)
        _param(self, "down", (D, Fh), dtype)

    def forward(self, x):
        return F.linear(F.silu(F.linear(x, self.gate)) * F.linear(x, self.up), self.down)


def rope_rotate_half(x, base):
    """RoPE with rotate-half pairs (i, i + D_h/2): x [B, T, H, D_h], positions 0..T-1 (layers/attention eq. 3)."""
    B, T, H, Dh = x.shape
    Fh = Dh // 2
    omega = torch.tensor([base ** (-2.0 * i / Dh) for i in range(Fh)], dtype=torch.float64).to(x.dtype)
    angles = torch.arange(T, dtype=x.dtype)[:, None] * omega[None, :]  # [T, F]
    cos, sin = angles.cos()[None, :, None, :], angles.sin()[None, :, None, :]
    x1, x2 = x[..., :Fh], x[..., Fh:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Attention(nn.Module):
    """Causal multi-head attention with rotate-half RoPE; q [H*D_h, D], k, v [H_kv*D_h, D], o [D, H*D_h]."""

    def __init__(self, D, facts, dtype):
        super().__init__()
        self.H, self.Hkv, self.Dh = facts["num_heads"], facts["num_kv_heads"], facts["head_dim"]
        self.base = facts["rope_base"]
        if facts["rope_convention"] != "rotate_half":
            raise ValueError("unknown rope_convention %r" % facts["rope_convention"])
        _param(self, "q", (self.H * self.Dh, D), dtype)
        _param(self, "k", (self.Hkv * self.Dh, D), dtype)
        _param(self, "v", (self.Hkv * self.Dh, D), dtype)
        _param(self, "o", (D, self.H * self.Dh), dtype)

    def forward(self, x):
        B, T, _ = x.shape
        q = rope_rotate_half(F.linear(x, self.q).view(B, T, self.H, self.Dh), self.base)
        k = rope_rotate_half(F.linear(x, self.k).view(B, T, self.Hkv, self.Dh), self.base)
        v = F.linear(x, self.v).view(B, T, self.Hkv, self.Dh)
        G = self.H // self.Hkv  # query head h reads key/value head h // G
        k, v = k.repeat_interleave(G, dim=2), v.repeat_interleave(G, dim=2)
        scores = torch.einsum("bthd,bshd->bhts", q / math.sqrt(self.Dh), k)
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        o = torch.einsum("bhts,bshd->bthd", scores.softmax(-1), v).reshape(B, T, self.H * self.Dh)
        return F.linear(o, self.o)


class ProtoT(nn.Module):
    """The ProtoT mixer of one layer (layers/protot doc.go eqs. 1-5); the projections are [out, in] already."""

    def __init__(self, D, facts, layer, dtype):
        super().__init__()
        R, Dv, K = facts["num_prototypes"], facts["value_width"], facts["conv_kernel"]
        self.f, self.shared, self.has_conv = facts, layer.get("shared_routing", False), layer.get("conv", False)
        _param(self, "prototypes", (R, D), dtype)
        _param(self, "value", (Dv, D), dtype)
        _param(self, "output", (D, Dv), dtype)
        _param(self, "decay_logit", (R,), dtype)
        _param(self, "write_temp", (), dtype)
        _param(self, "alpha", (), dtype)
        if not self.shared:
            _param(self, "read_query", (D, D), dtype)
            _param(self, "read_temp", (), dtype)
        if self.has_conv:
            _param(self, "conv", (Dv, 1, K), dtype)
        self.register_buffer("write_mask", torch.ones(R))
        self.register_buffer("read_mask", torch.ones(R))

    def _bias(self, mask, dtype):
        return torch.where(mask > 0, torch.zeros((), dtype=dtype),
                           torch.full((), self.f["masked_logit"], dtype=dtype))

    def forward(self, x):
        f, eps = self.f, self.f["temp_epsilon"]
        B, T, _ = x.shape
        wb, rb = self._bias(self.write_mask, x.dtype), self._bias(self.read_mask, x.dtype)
        w_logits = x @ self.prototypes.T / (self.write_temp.abs() + eps)  # [B, T, R]
        pi = (w_logits + wb).softmax(-1)
        if self.shared:
            rho = (w_logits + wb + rb).softmax(-1)
        else:
            r_logits = F.linear(x, self.read_query) @ self.prototypes.T / (self.read_temp.abs() + eps)
            rho = (r_logits + rb).softmax(-1)
        v = F.linear(x, self.value)  # [B, T, D_v]
        if self.has_conv:
            K = self.conv.shape[-1]
            conv = F.conv1d(F.pad(v.transpose(1, 2), (K - 1, 0)), self.conv, groups=v.shape[-1]).transpose(1, 2)
            v = 0.5 * (v + conv)
        read = self._read(pi, rho, v)  # sum_k rho_k M_k: [B, T, D_v]
        return self.alpha * F.linear(read, self.output)

    def _read(self, pi, rho, v):
        """sum_k rho[t,k] num[t,k]/max(den[t,k], floor), num and den over positions j <= t-1 (eq. 3)."""
        gamma, T, floor = self.decay_logit, pi.shape[1], self.f["mass_floor"]
        t = torch.arange(T)
        before = t[None, :] <= t[:, None] - 1  # [t, j]: j <= t-1
        if self.f["numerics"] == "reference":
            # The official code's float32 arithmetic: weights (1-beta)/(beta^j + 1e-12), one running sum, then
            # a rescale by beta^(t-1) (layers/protot doc.go, "Numerics").
            dtype = v.dtype
            g, pi, rho, v = gamma.float(), pi.float(), rho.float(), v.float()
            beta = torch.sigmoid(g)  # [R]
            tf = t.float()[:, None]  # [T, 1]
            w = (1 - beta) / (beta[None, :] ** tf + self.f["reference_offset"])  # [T(j), R]
            rescale = beta[None, :] ** (tf - 1).clamp(min=0)  # [T(t), R]
            lam = before.float()[None].expand(len(beta), T, T)  # [R, t, j]
            piw = pi * w[None]
            den = torch.einsum("ktj,bjk->btk", lam, piw) * rescale[None]
            u = rho / den.clamp(min=floor) * rescale[None]
            G = torch.einsum("btk,ktj,bjk->btj", u, lam, piw)
            return torch.einsum("btj,bjc->btc", G, v).to(dtype)
        lam = -F.softplus(-gamma)  # ln beta, stable
        scale = torch.sigmoid(-gamma)  # 1 - beta
        e = (t[:, None] - 1 - t[None, :]).to(v.dtype)  # t-1-j
        e = torch.where(before, e, torch.zeros_like(e))  # mask before exp
        L = torch.where(before[None], torch.exp(e[None] * lam[:, None, None]), torch.zeros((), dtype=v.dtype))
        L = L * scale[:, None, None]  # [R, t, j]
        den = torch.einsum("ktj,bjk->btk", L, pi)
        u = rho / den.clamp(min=floor)
        G = torch.einsum("btk,ktj,bjk->btj", u, L, pi)
        return torch.einsum("btj,bjc->btc", G, v)


def _causal_conv(x, kernel, bias=None):
    """Depthwise causal conv: x [B, T, C], kernel [C, 1, K] (the last tap multiplies the current token)."""
    K = kernel.shape[-1]
    return F.conv1d(F.pad(x.transpose(1, 2), (K - 1, 0)), kernel, bias, groups=x.shape[-1]).transpose(1, 2)


class DeltaNet(nn.Module):
    """DeltaNet (layers/deltanet doc.go eqs. 1-5, 11), run token by token."""

    def __init__(self, D, facts, dtype):
        super().__init__()
        self.f = facts
        H, d, K = facts["num_heads"], facts["head_dim"], facts["conv_size"]
        for n in ("q_proj", "k_proj", "v_proj"):
            _param(self, n, (H * d, D), dtype)
        for n in ("q_conv", "k_conv", "v_conv"):
            _param(self, n, (H * d, 1, K), dtype)
        _param(self, "beta_proj", (H, D), dtype)
        _param(self, "out_norm", (d,), dtype)
        _param(self, "out_proj", (D, H * d), dtype)

    def forward(self, x):
        f = self.f
        B, T, _ = x.shape
        H, d = f["num_heads"], f["head_dim"]

        def feat(w, k):
            return F.silu(_causal_conv(F.linear(x, w), k)).view(B, T, H, d)

        def unit(z):
            return z / torch.sqrt(z.pow(2).sum(-1, keepdim=True) + f["qk_norm_epsilon"])

        q = unit(feat(self.q_proj, self.q_conv)) / math.sqrt(d)
        k = unit(feat(self.k_proj, self.k_conv))
        v = feat(self.v_proj, self.v_conv)
        beta = torch.sigmoid(F.linear(x, self.beta_proj))  # [B, T, H]
        S = torch.zeros(B, H, d, d, dtype=x.dtype)
        outs = []
        for t in range(T):
            kt, vt, qt = k[:, t], v[:, t], q[:, t]  # [B, H, d]
            u = beta[:, t, :, None] * (vt - torch.einsum("bhd,bhde->bhe", kt, S))  # eq. 4
            S = S + kt[..., :, None] * u[..., None, :]  # eq. 5
            outs.append(torch.einsum("bhd,bhde->bhe", qt, S))
        o = torch.stack(outs, 1)  # [B, T, H, d]
        o = rms_norm(o, self.out_norm, f["norm_epsilon"])
        return F.linear(o.reshape(B, T, H * d), self.out_proj)


class Mamba(nn.Module):
    """Mamba-1 (layers/mamba doc.go eqs. 1-7), run token by token."""

    def __init__(self, D, facts, dtype):
        super().__init__()
        self.f = facts
        d, N, K, R = facts["d_inner"], facts["state_size"], facts["conv_size"], facts["dt_rank"]
        _param(self, "in_proj", (2 * d, D), dtype)
        _param(self, "conv_kernel", (d, 1, K), dtype)
        _param(self, "conv_bias", (d,), dtype)
        _param(self, "x_proj", (R + 2 * N, d), dtype)
        _param(self, "dt_proj", (d, R), dtype)
        _param(self, "dt_bias", (d,), dtype)
        _param(self, "a_log", (d, N), dtype)
        _param(self, "d_skip", (d,), dtype)
        _param(self, "out_proj", (D, d), dtype)

    def forward(self, x):
        f = self.f
        B, T, _ = x.shape
        d, N, R = f["d_inner"], f["state_size"], f["dt_rank"]
        xi, z = F.linear(x, self.in_proj).split(d, dim=-1)
        u = F.silu(_causal_conv(xi, self.conv_kernel, self.conv_bias))  # [B, T, d]
        delta_r, b, c = F.linear(u, self.x_proj).split([R, N, N], dim=-1)
        delta = F.softplus(F.linear(delta_r, self.dt_proj) + self.dt_bias)  # [B, T, d]
        A = -torch.exp(self.a_log)  # [d, N]
        h = torch.zeros(B, d, N, dtype=x.dtype)
        ys = []
        for t in range(T):
            h = torch.exp(delta[:, t, :, None] * A) * h + (delta[:, t] * u[:, t])[..., None] * b[:, t, None, :]
            ys.append((h * c[:, t, None, :]).sum(-1))
        y = torch.stack(ys, 1) + u * self.d_skip
        return F.linear(y * F.silu(z), self.out_proj)


class Block(nn.Module):
    def __init__(self, arch, layer, dtype):
        super().__init__()
        D, mixer = arch["width"], layer["mixer"]
        self.attn_norm = Norm(D, dtype)
        if mixer == "attention":
            self.attention = Attention(D, arch["attention"], dtype)
        elif mixer == "protot":
            self.protot = ProtoT(D, arch["protot"], layer, dtype)
        elif mixer == "deltanet":
            self.deltanet = DeltaNet(D, arch["deltanet"], dtype)
        elif mixer == "mamba":
            self.mamba = Mamba(D, arch["mamba"], dtype)
        else:
            raise ValueError("unknown mixer %r" % mixer)
        self.mixer_name = mixer
        self.drop_ffn = arch["drop_ffn"]
        if not self.drop_ffn:
            self.ffn_norm = Norm(D, dtype)
            self.ffn = FFN(D, arch["ffn_hidden"], dtype)
        self.eps = arch["norm_epsilon"]

    def forward(self, h):
        h = h + getattr(self, self.mixer_name)(rms_norm(h, self.attn_norm.gain, self.eps))
        if not self.drop_ffn:
            h = h + self.ffn(rms_norm(h, self.ffn_norm.gain, self.eps))
        return h


class Embed(nn.Module):
    def __init__(self, V, D, dtype):
        super().__init__()
        _param(self, "embeddings", (V, D), dtype)


class LMHead(nn.Module):
    def __init__(self, V, D, dtype):
        super().__init__()
        _param(self, "weights", (V, D), dtype)


class PrismBank(nn.Module):
    def __init__(self, K, D, dtype):
        super().__init__()
        _param(self, "prototypes", (K, D), dtype)


class ProtoLabLM(nn.Module):
    """The workbench's decoder LM (layers/decoder) built from an export's "architecture" metadata."""

    def __init__(self, arch):
        super().__init__()
        if arch.get("format") != FORMAT:
            raise ValueError("export format %r, want %r" % (arch.get("format"), FORMAT))
        dtype = {"float32": torch.float32, "float64": torch.float64}[arch["dtype"]]
        self.arch = arch
        V, D = arch["vocab_size"], arch["width"]
        self.embed = Embed(V, D, dtype)
        self.blocks = []
        for layer in arch["layers"]:
            b = Block(arch, layer, dtype)
            setattr(self, "block_%02d" % layer["index"], b)  # state_dict keys block_00.attention.q, ...
            self.blocks.append(b)
        self.final_norm = Norm(D, dtype)
        if not arch["tie_embeddings"]:
            self.lm_head = LMHead(V, D, dtype)
        if arch["head"] == "prism":
            self.prism = PrismBank(arch["prism"]["num_prototypes"], D, dtype)
        elif arch["head"] != "dense":
            raise ValueError("unknown head %r" % arch["head"])

    def unembedding(self):
        """The LM head W [V, D]: lm_head.weights, or the token embedding when tied."""
        return self.embed.embeddings if self.arch["tie_embeddings"] else self.lm_head.weights

    def hidden(self, tokens):
        """Final-normalised hidden states z: tokens [B, T] -> [B, T, D]."""
        h = self.embed.embeddings[tokens]
        for b in self.blocks:
            h = b(h)
        return rms_norm(h, self.final_norm.gain, self.arch["norm_epsilon"])

    def prism_head(self, z):
        """The PRISM decomposition (layers/prism doc.go eqs. 1-5): indices [B, T, k], activations [B, T, k],
        reconstruction z_hat and residual r [B, T, D], logits W(r + z_hat) [B, T, V]."""
        p = self.arch["prism"]
        eps, bank = p["eps"], self.prism.prototypes
        zn, pn = z.norm(dim=-1), bank.norm(dim=-1)
        scores = (z @ bank.T) / (zn[..., None] * pn + eps)  # [B, T, K]
        idx = scores.topk(p["top_k"], dim=-1).indices  # ties: the workbench takes the lower index
        sel = bank[idx]  # [B, T, k, D]
        sn = sel.norm(dim=-1)
        a = (torch.einsum("btd,btjd->btj", z, sel) / (zn[..., None] * sn + eps)).clamp(min=0)
        if p["activation_scale"] == "norm":
            a = a * zn[..., None] / (sn + eps)
        z_hat = torch.einsum("btj,btjd->btd", a, sel)
        r = z - z_hat
        logits = (r + z_hat) @ self.unembedding().T
        return {"indices": idx, "activations": a, "reconstruction": z_hat, "residual": r, "logits": logits}

    def forward(self, tokens):
        """Next-token logits: tokens [B, T] (int64 in [0, V)) -> [B, T, V]."""
        z = self.hidden(tokens)
        if self.arch["head"] == "prism":
            return self.prism_head(z)["logits"]
        return z @ self.unembedding().T


def load(path):
    """Returns the ProtoLabLM of a `protolab export` file, weights loaded (strict), in eval mode. The metadata
    (architecture, config, tensors, tokenizer) is on model.metadata, decoded from JSON where it is JSON."""
    tensors, meta = read_safetensors(path)
    if meta.get("format") != FORMAT:
        raise ValueError("%s: format %r, want %r (write it with `protolab export`)" % (path, meta.get("format"), FORMAT))
    arch = json.loads(meta["architecture"])
    model = ProtoLabLM(arch)
    model.load_state_dict(tensors, strict=True)
    model.metadata = {k: (json.loads(v) if k in ("architecture", "config", "tensors") else v) for k, v in meta.items()}
    return model.eval()


def _main(argv):
    import argparse

    ap = argparse.ArgumentParser(description="logits of a protolab export for given token rows")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--tokens", required=True, help='rows of token ids: "1,2,3;4,5,6"')
    ap.add_argument("--out", help="write the JSON here instead of stdout")
    args = ap.parse_args(argv)
    rows = torch.tensor([[int(x) for x in r.split(",")] for r in args.tokens.split(";")], dtype=torch.int64)
    result, recon = {}, {}
    for path in args.files:
        model = load(path)
        with torch.no_grad():
            result[path] = model(rows).double().tolist()
            if model.arch["head"] == "prism":
                recon[path] = model.prism_head(model.hidden(rows))["reconstruction"].double().tolist()
    text = json.dumps({"logits": result, "reconstruction": recon})
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)


if __name__ == "__main__":
    _main(sys.argv[1:])
