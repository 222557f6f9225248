"""The layers of a `protolab export` model in plain PyTorch: RMSNorm, SwiGLU FFN and the four mixers (attention,
ProtoT, DeltaNet, Mamba), one nn.Module each, read by protolab_lm.py (which assembles them into ProtoLabLM and
loads the file). The names and shapes are models/lm/doc.go's ("PyTorch export").
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


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
