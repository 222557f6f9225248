// Package timing measures how fast a decoder (layers/decoder) trains and decodes on the run's backend, the benchmarks
// of docs/spec/protot.md §7.2: Train times workbench/fit's training step on a fixed batch of random tokens, with the
// process's memory over the run (workbench/meter) and its CPU time; Decode times the one-token decoding step with a
// state (or KV cache) of a given capacity. Both take untimed warm-up steps first and keep every timed step, so that a
// caller can report the median with its spread (stats.Spread).
//
// Beside the measurements it holds the predictions they are compared with: CostModel turns a decoder configuration
// into theory/cost's model (matrix products and elementwise work per token, the decoding state's size), and
// TrainBytes estimates a training step's peak memory, the rule by which a caller skips a configuration that would
// not fit. experiments/speed runs them over mixers and contexts and turns them into its tables, figures and claims.
//
// Tests: cost_test.go checks that theory/cost, written separately from the layers, gives the layers' own FLOP counts
// and state sizes; timing_test.go times a tiny decoder.
package timing
