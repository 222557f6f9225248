package speed

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/gomlx/compute"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/timing"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
	"github.com/protolab/protolab/workbench/store"
)

// Machine describes the machine's speed and load during a benchmark run. The rates are the best of a few
// repetitions on the run's backend (meter.MeasureRates); CPU-second rates divide by the process's CPU time instead
// of the wall time.
type Machine struct {
	Backend     string  `json:"backend"`
	NumCPU      int     `json:"num_cpu"`
	LoadStart   float64 `json:"load_start"` // 1-minute load average before the runs
	LoadEnd     float64 `json:"load_end"`   // and after
	meter.Rates         // matmul_gflops, matmul_gflops_per_cpu_s, elementwise_gops, roof_gflops
}

// ThroughputRow is one training configuration (mixer, T). A training step is workbench/fit's: loss, gradients,
// global-norm clipping and the AdamW update, on a fixed batch of random tokens.
type ThroughputRow struct {
	Mixer   string `json:"mixer"`
	T       int    `json:"t"`
	Batch   int    `json:"batch"`             // B = token_budget / T
	Skipped string `json:"skipped,omitempty"` // why the configuration did not run; empty when it ran
	// Form is the attention computation that ran, "full" or "chunked" (attention.Config.Chunked at T); empty for
	// the other mixers.
	Form string `json:"form,omitempty"`
	Note string `json:"note,omitempty"` // e.g. fewer timed steps than asked (max_seconds)

	StepSeconds  []float64 `json:"step_seconds"`   // wall time of each timed step
	TokensPerSec float64   `json:"tokens_per_sec"` // the median over the timed steps of B·T / step time
	// Spread is the spread of the timed steps' tokens/s (B·T / step time): median, quartiles and extremes.
	Spread          stats.Spread `json:"spread"`
	TokensPerCPUSec float64      `json:"tokens_per_cpu_sec"` // B·T·steps / process CPU seconds of the timed steps
	Loss            float64      `json:"loss"`               // the last step's loss (a sanity check)

	// Memory: the process's resident set (VmRSS, sampled every 5 ms, and VmHWM after resetting it) over the
	// configuration's whole run (compilation, warm-up and timed steps); BaseMB is the RSS just before, after a GC.
	PeakMB      float64 `json:"peak_mb"`
	BaseMB      float64 `json:"base_mb"`
	PeakHeapMB  float64 `json:"peak_heap_mb"` // Go heap objects (runtime/metrics), sampled likewise
	EstimatedMB float64 `json:"estimated_mb"` // the estimate the skip rule used

	// Predictions (theory/cost): training work per token, 3× the forward work, and the tokens/s it gives at the
	// machine's measured rates.
	TrainFLOPs float64 `json:"train_flops_per_token"`
	// GFLOPsPerSec is the measured rate of matrix-product work, TrainFLOPs·TokensPerSec/1e9, and RoofFraction its
	// share of the backend's matmul roof measured in the same run (Machine.RoofGFLOPs, a 1024³ float32 product): how
	// close the training step comes to what the backend's matrix products can do.
	GFLOPsPerSec          float64 `json:"gflops_per_sec"`
	RoofFraction          float64 `json:"roof_fraction"`
	TrainElementwise      float64 `json:"train_elementwise_per_token"`
	PredictedTokensPerSec float64 `json:"predicted_tokens_per_sec"`

	// Ratios to the same mixer's first context that ran: tokens/s(T) / tokens/s(T₀), predicted (matrix products
	// and elementwise work at the machine's rates; and products only) and measured (wall clock; CPU seconds).
	// Agreement = MeasuredRelCPU / PredictedRel: 1 when the cost model predicts the slowdown exactly.
	PredictedRel       float64 `json:"predicted_rel"`
	PredictedRelMatMul float64 `json:"predicted_rel_matmul"`
	MeasuredRel        float64 `json:"measured_rel"`
	MeasuredRelCPU     float64 `json:"measured_rel_cpu"`
	Agreement          float64 `json:"agreement"`
	// Speed-ups over attention at the same T (0 without an attention row): predicted and measured (CPU seconds).
	PredictedSpeedup float64 `json:"predicted_speedup_vs_attention"`
	MeasuredSpeedup  float64 `json:"measured_speedup_vs_attention"`
}

// DecodeRow is one decoding configuration (mixer, context): batch 1, the token at position context−1, with a
// state of capacity context (attention's KV cache holds context positions) filled with random values.
type DecodeRow struct {
	Mixer   string `json:"mixer"`
	Context int    `json:"context"`

	MsPerToken    float64      `json:"ms_per_token"`     // median wall time of one step
	CPUMsPerToken float64      `json:"cpu_ms_per_token"` // process CPU time per step
	StepMs        []float64    `json:"step_ms"`          // every timed step
	Spread        stats.Spread `json:"spread"`           // of StepMs: median, quartiles and extremes
	// CPUResolutionMs is the CPU clock's resolution divided by the timed steps: CPUMsPerToken below ten of these
	// is not quoted (meter.FormatResolved); 0 in results stored before it was recorded.
	CPUResolutionMs float64 `json:"cpu_resolution_ms,omitempty"`

	StateBytes          int     `json:"state_bytes"`            // from theory/cost, all layers, float size of dtype
	MeasuredStateBytes  int     `json:"measured_state_bytes"`   // from decoder.StateShapes
	DecodeFLOPs         float64 `json:"decode_flops"`           // theory/cost matrix products per token
	DecodeElementwise   float64 `json:"decode_elementwise"`     // and elementwise operations
	PredictedMsPerToken float64 `json:"predicted_ms_per_token"` // at the machine's measured rates

	// Time ratios to the mixer's first context: ms(context) / ms(context₀), predicted and measured (wall clock).
	PredictedRel float64 `json:"predicted_rel"`
	MeasuredRel  float64 `json:"measured_rel"`
}

// Result is what the study measured: the rows of its mode (both kinds with ModeBoth).
type Result struct {
	Mode       string          `json:"mode"` // "both", "throughput" or "decode"
	Provenance *run.Provenance `json:"provenance"`
	Machine    Machine         `json:"machine"`
	Throughput []ThroughputRow `json:"throughput,omitempty"`
	Decode     []DecodeRow     `json:"decode,omitempty"`
	// Architectures holds, for each mixer of the throughput rows, the decoder as models/lm's PyTorch export
	// describes it (lm.ArchitectureOf): scripts/torch_throughput.py builds the same model from it.
	Architectures map[string]lm.Architecture `json:"architectures,omitempty"`
}

// bench holds what both benchmarks share.
type bench struct {
	cfg     Config
	o       run.Options
	backend compute.Backend
	res     *Result
	partial string // the file the result so far is saved to after every row ("" in memory)
}

// Study is the name under which results are stored (run.Out/<Study>/) and the CLI runs the study.
const Study = "speed"

// Runs is the study's entry points (run.Entry): Runs.LoadOrRun(cfg) returns the result stored for cfg under
// run.Out or runs the study; Runs.Run(cfg) runs it even when a result is stored (the models it trains are loaded
// from run.Out/models when trained before); Runs.Notebook() and Runs.NotebookConfig() are what a notebook shows
// and starts its settings from at $PROTOLAB_PRESET.
var Runs = run.Entry[Config, *Result]{Study: Study, Preset: Preset, Small: Small, Quick: Quick, Compute: runStudy}

// runStudy runs the benchmarks of cfg.Mode.
func runStudy(cfg Config, prov *run.Provenance, o run.Options) (*Result, error) {
	backend, err := run.Backend()
	if err != nil {
		return nil, err
	}
	prov.Seed = cfg.Seed
	prevLimit := debug.SetMemoryLimit(int64(cfg.MaxMemoryGB * (1 << 30)))
	defer debug.SetMemoryLimit(prevLimit)
	b := &bench{cfg: cfg, o: o, backend: backend, res: &Result{Mode: cfg.Mode, Provenance: prov}}
	b.res.Machine = Machine{Backend: run.BackendConfig(), NumCPU: runtime.NumCPU(), LoadStart: meter.Load(),
		Rates: meter.MeasureRates(backend)}
	if o.Out != "" {
		path, err := store.CachePath(run.StudyDir(o.Out, Study), "partial", cfg)
		if err != nil {
			return nil, err
		}
		b.partial = path
	}
	if cfg.Mode != ModeDecode {
		if err := prov.Time("throughput", b.throughput); err != nil {
			return nil, err
		}
	}
	if cfg.Mode != ModeThroughput {
		if err := prov.Time("decode", b.decode); err != nil {
			return nil, err
		}
	}
	return b.finish()
}

func (b *bench) logf(format string, args ...any) { b.o.Logf(Study, format, args...) }

// save writes the result so far to the partial file, so that an interrupted hour-long run keeps its rows.
func (b *bench) save() error {
	if b.partial == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(b.partial), 0o755); err != nil {
		return errors.Wrapf(err, "speed: creating the folder of %s", b.partial)
	}
	return store.SaveJSON(b.partial, b.res)
}

// finish records the load after the runs and removes the partial file: the whole result is stored next.
func (b *bench) finish() (*Result, error) {
	b.res.Machine.LoadEnd = meter.Load()
	if b.partial != "" {
		if err := os.Remove(b.partial); err != nil && !os.IsNotExist(err) {
			return nil, errors.Wrap(err, "speed: removing the partial result")
		}
	}
	return b.res, nil
}

// String is the study's report: the table of each benchmark it ran.
func (r *Result) String() string {
	var b strings.Builder
	if len(r.Throughput) > 0 || r.Mode != ModeDecode {
		_ = WriteThroughputTable(&b, r) // a strings.Builder does not fail
	}
	if len(r.Decode) > 0 || r.Mode == ModeDecode {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		_ = WriteDecodeTable(&b, r)
	}
	return b.String()
}

// settings are models/timing's settings of a configuration with the given number of timed steps.
func (b *bench) settings(steps int) timing.Settings {
	return timing.Settings{Warmup: b.cfg.Warmup, Steps: steps, MaxSeconds: b.cfg.MaxSeconds, Seed: b.cfg.Seed}
}
