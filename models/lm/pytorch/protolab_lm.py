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
import struct
import sys

import torch
from torch import nn

from protolab_mixers import FFN, Attention, DeltaNet, Mamba, Norm, ProtoT, _param, rms_norm

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
