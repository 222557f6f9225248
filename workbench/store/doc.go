// Package store writes and reads ProtoLab's files: model weights as safetensors (readable from PyTorch, JAX and
// NumPy through the `safetensors` Python package) and results as indented JSON. Every write is atomic: the data goes
// to a temporary file in the destination folder, which is synced and then renamed over the destination, so a crash
// leaves either the old file or the new one, never half of one.
//
// # Safetensors format
//
// Save and Load implement the format of github.com/huggingface/safetensors in pure Go:
//
//	bytes [0, 8)          N, the header length, uint64 little-endian
//	bytes [8, 8+N)        the header: a UTF-8 JSON object, padded with spaces to a multiple of 8 bytes
//	bytes [8+N, EOF)      the data buffer: every tensor's raw little-endian values, row-major (C order)
//
// The header maps each tensor name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, with the
// offsets relative to the start of the data buffer, plus an optional "__metadata__" object of string values.
// Save writes the tensors in name order, contiguously. Load checks that the header length fits in the file, that the
// header is a JSON object without duplicate names, that each dtype is known, that each shape is present with
// non-negative dimensions, that each byte range is one [begin, end] pair inside the data buffer with exactly
// shape × dtype-size bytes (a product checked for int64 overflow before it is formed, so a crafted shape cannot wrap
// to a small size), that the ranges neither overlap nor leave holes, and that BOOL bytes are 0 or 1. Nothing is
// allocated before these checks against the file's size pass, and no input makes Load panic (FuzzLoad); every
// error names the file and, where there is one, the tensor.
//
// Supported dtypes (safetensors name → gomlx dtype): F64 Float64, F32 Float32, F16 Float16, BF16 BFloat16, I64 Int64,
// I32 Int32, I16 Int16, I8 Int8, U64 Uint64, U32 Uint32, U16 Uint16, U8 Uint8, BOOL Bool (one byte, 0 or 1).
// Zero-sized tensors and scalars (shape []) are allowed.
//
// # Tensor names
//
// ExportContext names each gomlx variable by its scope path and name joined with dots, dropping the leading "/":
//
//	scope "/block_00/ffn", variable "up"      →  "block_00.ffn.up"
//	scope "/block_00/attention", variable "q" →  "block_00.attention.q"
//	scope "/", variable "#rngState"           →  "#rngState"
//
// Name and SplitName convert in both directions. Because '.' is the separator, a scope element or variable name that
// contains '.' cannot be exported (ExportContext returns an error naming it). Scope names are part of each layer's
// documented API (docs/STYLE.md §4), so these names are stable as long as the scopes are.
//
// ExportContext also records, under the metadata key MetaNonTrainable, a JSON list of the exported variables that
// are not trainable (optimizer slots, step counters, the RNG state), so that ImportContext restores the flag.
//
// # Layout and PyTorch
//
// Tensors are stored exactly as gomlx holds them, so their orientation is each layer's own: the decoder's FFN and
// attention projections are [in, out] (y = x·W), ProtoT's projections [out, in] (y = W·x), DeltaNet's and Mamba's
// depthwise kernels [C, K] while ProtoT's is [C, 1, K]. A file written by ExportContext is a workbench checkpoint,
// not an interchange format. For PyTorch, use the export of models/lm (`protolab export`; models/lm doc.go,
// "PyTorch export"), which orients every tensor by one documented rule ([out, in] for projections, [C, 1, K] for
// depthwise kernels) and records the architecture in its metadata; models/lm/pytorch/protolab_lm.py loads it.
// Any safetensors file is readable from Python (pip install safetensors):
//
//	from safetensors.torch import load_file
//	sd = load_file("weights.safetensors")       # dict: name -> torch.Tensor
//	w = sd["block_00.ffn.up"]                   # [D, F] here; the export holds it as [F, D]
//
// The metadata is available with safetensors.safe_open(path, "pt").metadata().
//
// # JSON results
//
// SaveJSON writes any value as indented JSON (atomically); LoadJSON reads it back. Experiments embed
// run.Provenance in their Result, so a saved result carries its configuration, commit, backend and timings.
package store
