// Package run is the entry point every ProtoLab program, test and notebook imports first: importing it registers the
// pure-Go backend (and XLA in cgo builds without the noxla tag) and ProtoLab's gradient rules (workbench/gradfix), so a
// GoNB notebook needs no blank imports of its own.
//
// It provides:
//   - Backend: the backend chosen from $GOMLX_BACKEND, else XLA where a PJRT plugin is installed (found by Plugins,
//     passed by path, never downloaded), else the pure-Go backend with unlimited parallelism; one printed line says
//     which and why, and for the go backend which SIMD matmul kernels run (SIMD); DescribeBackend says it without
//     starting anything. $PROTOLAB_XLA_OPTIONS sets the plugin's client options (ParseXLAOptions).
//   - Cost: a study's estimated compute (runs, tokens, FLOPs), for `protolab cost`.
//   - Override: "model.num_layers=4;train.lr=3e-4" style overrides of a config struct by dotted JSON keys; unknown keys
//     and ill-typed values are errors that name the key.
//   - NewStore and RNG: deterministic seeding of model weights (a gomlx model.Store) and of Go-side randomness.
//   - Provenance: the configuration, git commit, backend and its SIMD kernels, Go and gomlx versions, seed and
//     timings of a run.
package run
