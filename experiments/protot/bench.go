package protot

import (
	"bytes"
	stdctx "context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/mamba"
	ptlayer "github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/theory/cost"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
	"github.com/protolab/protolab/workbench/store"
)

// BenchConfig configures the throughput and decoding benchmarks of docs/spec/protot.md §7.2 (our protocol for the CPU):
// one decoder per mixer, trained at several context lengths T with B·T fixed, and decoded one token at a time with
// a state (or KV cache) sized for each context. Start from BenchTiny, BenchSmall or BenchPaper.
type BenchConfig struct {
	Mixers   []string `json:"mixers"`   // decoder mixers to compare (decoder.KnownMixers)
	Contexts []int    `json:"contexts"` // context lengths T, ascending; the first is the reference of the ratios
	// TokenBudget is B·T, the tokens of one training step; B = TokenBudget/T (at least 1).
	TokenBudget  int    `json:"token_budget"`
	Width        int    `json:"width"`         // D
	NumLayers    int    `json:"num_layers"`    // L
	Vocab        int    `json:"vocab"`         // V
	Steps        int    `json:"steps"`         // timed steps (training) per configuration; > 0
	Warmup       int    `json:"warmup"`        // untimed steps first, the first of which compiles; ≥ 1
	DecodeTokens int    `json:"decode_tokens"` // timed decoding steps per configuration; > 0
	DType        string `json:"dtype"`         // "float32" or "float64"
	Out          string `json:"out"`           // JSON file the result is written to (after every row); "" for none
	Seed         uint64 `json:"seed"`          // weights and token draws
	// MaxMemoryGB skips a training configuration whose estimated peak memory exceeds it (the reason is recorded),
	// and is the Go runtime's soft memory limit during the runs; > 0.
	MaxMemoryGB float64 `json:"max_memory_gb"`
	// MaxSeconds stops timing a configuration after the first timed step that ends past this many seconds since
	// the configuration started (compilation included); ≤ 0 means no limit.
	MaxSeconds float64          `json:"max_seconds"`
	Attention  attention.Config `json:"attention"` // the "attention" mixer
	ProtoT     ptlayer.Config   `json:"protot"`    // the "protot" mixer
	DeltaNet   deltanet.Config  `json:"deltanet"`  // the "deltanet" mixer
	Mamba      mamba.Config     `json:"mamba"`     // the "mamba" mixer
}

// BenchTiny takes seconds on a CPU: the tests use it.
func BenchTiny() BenchConfig {
	c := BenchSmall()
	c.Contexts = []int{16, 64}
	c.TokenBudget = 128
	c.Width, c.NumLayers, c.Vocab = 32, 2, 64
	c.Attention.NumHeads, c.DeltaNet.NumHeads = 2, 2
	c.ProtoT.NumPrototypes, c.ProtoT.ChunkSize = 8, 16
	c.DeltaNet.ChunkSize = 8
	c.Steps, c.Warmup, c.DecodeTokens = 2, 1, 3
	c.MaxMemoryGB = 2
	return c
}

// BenchSmall is the CPU study (about an hour on 2 cores): the benchmark decoder of layers/decoder (D = 128,
// 4 layers, V = 2,048, 4 heads, float32) with each mixer, T ∈ {256, 1024, 2048, 4096, 8192} at 8,192 tokens per
// step (B = 32 … 1). ProtoT uses chunks of 16 tokens, faster on the pure-Go backend than the spec's 64
// (layers/decoder's BenchmarkProtoTForwardBackward); the prefix mean is exact whatever the chunk. A configuration
// runs when its estimated peak memory fits in 10 GB: on the pure-Go backend attention keeps about 24 bytes per
// score element, so it stops at T = 2048 (T = 8192 would need about 27 GB).
func BenchSmall() BenchConfig {
	pt := ptlayer.DefaultConfig()
	pt.ChunkSize = 16
	att := attention.DefaultConfig()
	att.RoPEBase = 10_000
	return BenchConfig{
		Mixers:       slices.Clone(decoder.KnownMixers),
		Contexts:     []int{256, 1024, 2048, 4096, 8192},
		TokenBudget:  8192,
		Width:        128,
		NumLayers:    4,
		Vocab:        2048,
		Steps:        2,
		Warmup:       1,
		DecodeTokens: 20,
		DType:        "float32",
		Seed:         1,
		MaxMemoryGB:  10,
		MaxSeconds:   600,
		Attention:    att,
		ProtoT:       pt,
		DeltaNet:     deltanet.DefaultConfig(),
		Mamba:        mamba.DefaultConfig(),
	}
}

// BenchPaper is the paper's backbone (docs/spec/protot.md §3: D = 256, L = 6, V = 16,384) at the §7.2 contexts up to
// 32k with 32·256 tokens per step and the spec's ProtoT chunk of 64; meant for a GPU with XLA.
func BenchPaper() BenchConfig {
	c := BenchSmall()
	c.Contexts = []int{1024, 2048, 4096, 8192, 16384, 32768}
	c.TokenBudget = 32 * 256
	c.Width, c.NumLayers, c.Vocab = 256, 6, 16_384
	c.ProtoT = ptlayer.DefaultConfig()
	c.Attention = attention.DefaultConfig()
	c.Steps, c.Warmup, c.DecodeTokens = 10, 3, 128
	c.MaxMemoryGB = 64
	c.MaxSeconds = 0
	return c
}

// BenchPreset returns the named preset: "tiny", "small" (also "") or "paper".
func BenchPreset(name string) (BenchConfig, error) {
	return run.SelectPreset(name, BenchTiny, BenchSmall, BenchPaper)
}

// BenchQuick is the notebook's stand-in for BenchSmall when the full study has not been run: a narrower decoder
// (D = 64, 2 layers) with 4,096 tokens per step, one timed step per configuration, at T ∈ {256, 1024, 4096, 8192}
// — a few minutes on 2 cores. Its ratios (tokens/s against T, mixer against mixer) answer the same questions,
// with more noise; `protolab bench throughput|decode --preset small` runs the full study.
func BenchQuick() BenchConfig {
	c := BenchSmall()
	c.Contexts = []int{256, 1024, 4096, 8192}
	c.TokenBudget = 4096
	c.Width, c.NumLayers = 64, 2
	c.Steps, c.Warmup, c.DecodeTokens = 1, 1, 10
	c.MaxSeconds = 120
	return c
}

// BenchFile returns the file of the study's result for a mode ("throughput" or "decode") and preset under dir:
// dir/bench-<mode>-<preset>.json. The CLI writes there by default and the notebook reads it.
func BenchFile(dir, mode, preset string) string {
	return filepath.Join(dir, fmt.Sprintf("bench-%s-%s.json", mode, preset))
}

// NotebookBench returns the result a notebook shows for a mode ("throughput" or "decode") and preset: the full
// study from BenchFile(dir, mode, preset) when `protolab bench` has written it there; otherwise it runs the preset
// — BenchQuick in place of BenchSmall, so the cell takes minutes, not an hour — and caches that run in
// BenchFile(dir, mode, preset+"-quick") (or the tiny/paper file) for the next call. The returned string says which.
func NotebookBench(mode, preset, dir string, opts ...BenchOption) (*BenchResult, string, error) {
	if mode != "throughput" && mode != "decode" {
		return nil, "", errors.Errorf("bench: unknown mode %q; want throughput or decode", mode)
	}
	cfg, err := BenchPreset(preset)
	if err != nil {
		return nil, "", err
	}
	if preset == "" {
		preset = "small"
	}
	full := BenchFile(dir, mode, preset)
	if res, err := LoadBench(full, mode); err == nil {
		return res, "the full study in " + full, nil
	} else if !os.IsNotExist(errors.Cause(err)) {
		return nil, "", err
	}
	name := preset
	if preset == "small" {
		cfg, name = BenchQuick(), "small-quick"
	}
	cfg.Out = BenchFile(dir, mode, name)
	if res, err := LoadBench(cfg.Out, mode); err == nil {
		return res, "the cached run in " + cfg.Out, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", errors.Wrapf(err, "bench: creating %s", dir)
	}
	run := RunThroughput
	if mode == "decode" {
		run = RunDecode
	}
	res, err := run(cfg, opts...)
	if err != nil {
		return nil, "", err
	}
	return res, "a new run (" + name + "), saved in " + cfg.Out, nil
}

// LoadBench reads a BenchResult written by RunThroughput or RunDecode (BenchConfig.Out). A missing file is an
// error satisfying os.IsNotExist (errors.Cause); a result of another mode, or one that holds no rows, is an
// error naming the file.
func LoadBench(path, mode string) (*BenchResult, error) {
	var res BenchResult
	if err := store.LoadJSON(path, &res); err != nil {
		return nil, err
	}
	if res.Mode != mode {
		return nil, errors.Errorf("bench result %s: mode %q, want %q", path, res.Mode, mode)
	}
	if len(res.Throughput)+len(res.Decode) == 0 {
		return nil, errors.Errorf("bench result %s holds no measurements", path)
	}
	return &res, nil
}

// ModelConfig returns the decoder of the benchmark with the given mixer, its decoding capacity set to the longest
// context.
func (c BenchConfig) ModelConfig(mixer string) decoder.Config {
	m := decoder.DefaultConfig()
	m.Mixer = mixer
	m.VocabSize, m.Width, m.NumLayers, m.DType = c.Vocab, c.Width, c.NumLayers, c.DType
	m.Attention, m.ProtoT, m.DeltaNet, m.Mamba = c.Attention, c.ProtoT, c.DeltaNet, c.Mamba
	m.MaxLen = 1
	for _, T := range c.Contexts {
		m.MaxLen = max(m.MaxLen, T)
	}
	return m
}

// Validate reports the first problem of the configuration, naming its key.
func (c BenchConfig) Validate() error {
	switch {
	case len(c.Mixers) == 0:
		return errors.New("mixers is empty")
	case len(c.Contexts) == 0:
		return errors.New("contexts is empty")
	case c.TokenBudget <= 0:
		return errors.Errorf("token_budget=%d, want > 0", c.TokenBudget)
	case c.Steps <= 0:
		return errors.Errorf("steps=%d, want > 0", c.Steps)
	case c.Warmup < 1:
		return errors.Errorf("warmup=%d, want ≥ 1 (the first step compiles)", c.Warmup)
	case c.DecodeTokens <= 0:
		return errors.Errorf("decode_tokens=%d, want > 0", c.DecodeTokens)
	case !(c.MaxMemoryGB > 0):
		return errors.Errorf("max_memory_gb=%g, want > 0", c.MaxMemoryGB)
	}
	for i, T := range c.Contexts {
		if T < 2 || (i > 0 && T <= c.Contexts[i-1]) {
			return errors.Errorf("contexts=%v, want ascending values ≥ 2", c.Contexts)
		}
	}
	seen := map[string]bool{}
	for _, m := range c.Mixers {
		if seen[m] {
			return errors.Errorf("mixers=%v lists %q twice", c.Mixers, m)
		}
		seen[m] = true
		if err := c.ModelConfig(m).Validate(); err != nil {
			return err
		}
	}
	return nil
}

// CostModel returns theory/cost's model of a decoder configuration: the same sizes, with theory/cost's own
// resolution of the zero values. Returns an error for an invalid configuration.
func CostModel(m decoder.Config) (cost.Model, error) {
	if err := m.Validate(); err != nil {
		return cost.Model{}, err
	}
	cm := cost.Model{Vocab: m.VocabSize, Width: m.Width, Layers: m.NumLayers, FFN: m.FFNHidden, DropFFN: m.DropFFN}
	D := m.Width
	switch m.Mixer {
	case decoder.MixerAttention:
		a := m.Attention
		cm.Mixer = cost.Attention{Width: D, Heads: a.NumHeads, KVHeads: a.NumKVHeads, HeadDim: a.HeadDim}
	case decoder.MixerProtoT:
		p := m.ProtoT
		dense := 0
		if p.Form == ptlayer.FormAuto {
			dense = p.DenseMaxLen
		}
		cm.Mixer = cost.ProtoT{Width: D, Prototypes: p.NumPrototypes, ValueWidth: p.ValueWidth, Chunk: p.ChunkSize,
			DenseMaxLen: dense, Dense: p.Form == ptlayer.FormDense, SharedRoutingLayers: p.SharedRoutingLayers,
			ConvLayers: p.ConvLayers, ConvKernel: p.ConvKernel}
	case decoder.MixerDeltaNet:
		d := m.DeltaNet
		cm.Mixer = cost.DeltaNet{Width: D, Heads: d.NumHeads, HeadDim: d.HeadDim, Chunk: d.ChunkSize, ConvSize: d.ConvSize}
	case decoder.MixerMamba:
		b := m.Mamba
		cm.Mixer = cost.Mamba{Width: D, Expand: b.Expand, StateSize: b.StateSize, DTRank: b.DTRank, ConvSize: b.ConvSize}
	default:
		return cost.Model{}, errors.Errorf("mixer=%q has no cost model", m.Mixer)
	}
	return cm, nil
}

// BenchMachine describes the machine's speed and load during a benchmark run. The rates are the best of a few
// repetitions on the run's backend; CPU-second rates divide by the process's CPU time instead of the wall time.
type BenchMachine struct {
	Backend               string  `json:"backend"`
	NumCPU                int     `json:"num_cpu"`
	LoadStart             float64 `json:"load_start"`              // 1-minute load average before the runs
	LoadEnd               float64 `json:"load_end"`                // and after
	MatMulGFLOPs          float64 `json:"matmul_gflops"`           // 512³ float products, wall clock
	MatMulGFLOPsPerCPUSec float64 `json:"matmul_gflops_per_cpu_s"` // the same per CPU-second
	ElementwiseGops       float64 `json:"elementwise_gops"`        // exp, multiply, add over 2²² values, wall clock
}

// ThroughputRow is one training configuration (mixer, T). A training step is workbench/fit's: loss, gradients,
// global-norm clipping and the AdamW update, on a fixed batch of random tokens.
type ThroughputRow struct {
	Mixer   string `json:"mixer"`
	T       int    `json:"t"`
	Batch   int    `json:"batch"`             // B = token_budget / T
	Skipped string `json:"skipped,omitempty"` // why the configuration did not run; empty when it ran
	Note    string `json:"note,omitempty"`    // e.g. fewer timed steps than asked (max_seconds)

	StepSeconds     []float64 `json:"step_seconds"`       // wall time of each timed step
	TokensPerSec    float64   `json:"tokens_per_sec"`     // B·T / median step time
	TokensPerCPUSec float64   `json:"tokens_per_cpu_sec"` // B·T·steps / process CPU seconds of the timed steps
	Loss            float64   `json:"loss"`               // the last step's loss (a sanity check)

	// Memory: the process's resident set (VmRSS, sampled every 5 ms, and VmHWM after resetting it) over the
	// configuration's whole run (compilation, warm-up and timed steps); BaseMB is the RSS just before, after a GC.
	PeakMB      float64 `json:"peak_mb"`
	BaseMB      float64 `json:"base_mb"`
	PeakHeapMB  float64 `json:"peak_heap_mb"` // Go heap objects (runtime/metrics), sampled likewise
	EstimatedMB float64 `json:"estimated_mb"` // the estimate the skip rule used

	// Predictions (theory/cost): training work per token, 3× the forward work, and the tokens/s it gives at the
	// machine's measured rates.
	TrainFLOPs            float64 `json:"train_flops_per_token"`
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

	MsPerToken    float64   `json:"ms_per_token"`     // median wall time of one step
	CPUMsPerToken float64   `json:"cpu_ms_per_token"` // process CPU time per step
	StepMs        []float64 `json:"step_ms"`          // every timed step

	StateBytes          int     `json:"state_bytes"`            // from theory/cost, all layers, float size of dtype
	MeasuredStateBytes  int     `json:"measured_state_bytes"`   // from decoder.StateShapes
	DecodeFLOPs         float64 `json:"decode_flops"`           // theory/cost matrix products per token
	DecodeElementwise   float64 `json:"decode_elementwise"`     // and elementwise operations
	PredictedMsPerToken float64 `json:"predicted_ms_per_token"` // at the machine's measured rates

	// Time ratios to the mixer's first context: ms(context) / ms(context₀), predicted and measured (wall clock).
	PredictedRel float64 `json:"predicted_rel"`
	MeasuredRel  float64 `json:"measured_rel"`
}

// BenchResult is what RunThroughput and RunDecode return and write to BenchConfig.Out.
type BenchResult struct {
	Mode       string          `json:"mode"` // "throughput" or "decode"
	Provenance *run.Provenance `json:"provenance"`
	Machine    BenchMachine    `json:"machine"`
	Throughput []ThroughputRow `json:"throughput,omitempty"`
	Decode     []DecodeRow     `json:"decode,omitempty"`
}

// BenchOption changes how RunThroughput and RunDecode run.
type BenchOption func(*benchOptions)

type benchOptions struct {
	overrides string
	progress  io.Writer
}

// BenchOverrides records the override string applied to the preset, for provenance.
func BenchOverrides(s string) BenchOption { return func(o *benchOptions) { o.overrides = s } }

// BenchProgress sends one line per configuration to w (default stderr; nil silences it).
func BenchProgress(w io.Writer) BenchOption { return func(o *benchOptions) { o.progress = w } }

// benchRun holds what both benchmarks share.
type benchRun struct {
	cfg     BenchConfig
	o       benchOptions
	backend backends.Backend
	res     *BenchResult
}

func startBench(mode string, cfg BenchConfig, opts []BenchOption) (*benchRun, func(), error) {
	o := benchOptions{progress: os.Stderr}
	for _, opt := range opts {
		opt(&o)
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	backend, err := run.Backend()
	if err != nil {
		return nil, nil, err
	}
	prevLimit := debug.SetMemoryLimit(int64(cfg.MaxMemoryGB * (1 << 30)))
	restore := func() { debug.SetMemoryLimit(prevLimit) }
	final := cfg
	b := &benchRun{cfg: cfg, o: o, backend: backend, res: &BenchResult{Mode: mode,
		Provenance: run.NewProvenance(&final, o.overrides, cfg.Seed)}}
	b.res.Machine = benchMachine(backend)
	return b, restore, nil
}

func (b *benchRun) logf(format string, args ...any) {
	if b.o.progress != nil {
		fmt.Fprintf(b.o.progress, format+"\n", args...)
	}
}

// save writes the result so far to cfg.Out, when set.
func (b *benchRun) save() error {
	if b.cfg.Out == "" {
		return nil
	}
	return store.SaveJSON(b.cfg.Out, b.res)
}

func (b *benchRun) finish() (*BenchResult, error) {
	b.res.Machine.LoadEnd = benchLoad()
	b.res.Provenance.Finish()
	if err := b.save(); err != nil {
		return nil, err
	}
	return b.res, nil
}

// RunThroughput measures training throughput and peak memory for every (mixer, T) of cfg, next to theory/cost's
// predictions (ThroughputRow). Each configuration is compiled once, run cfg.Warmup untimed steps, then cfg.Steps
// timed ones. A configuration whose estimated memory exceeds max_memory_gb is skipped with the reason recorded.
func RunThroughput(cfg BenchConfig, opts ...BenchOption) (*BenchResult, error) {
	b, restore, err := startBench("throughput", cfg, opts)
	if err != nil {
		return nil, err
	}
	defer restore()
	for _, mixer := range cfg.Mixers {
		for _, T := range cfg.Contexts {
			row, err := b.trainOne(mixer, T)
			if err != nil {
				return nil, errors.WithMessagef(err, "bench throughput %s T=%d", mixer, T)
			}
			b.res.Throughput = append(b.res.Throughput, row)
			NormaliseThroughput(b.res.Throughput)
			if row.Skipped != "" {
				b.logf("bench: %-9s T=%-6d skipped: %s", mixer, T, row.Skipped)
			} else {
				b.logf("bench: %-9s T=%-6d B=%-4d %9.0f tokens/s %9.0f tokens/cpu-s (predicted %.0f), peak %.0f MB",
					mixer, T, row.Batch, row.TokensPerSec, row.TokensPerCPUSec, row.PredictedTokensPerSec, row.PeakMB)
			}
			if err := b.save(); err != nil {
				return nil, err
			}
		}
	}
	return b.finish()
}

// trainOne runs one training configuration.
func (b *benchRun) trainOne(mixer string, T int) (ThroughputRow, error) {
	cfg := b.cfg
	mcfg := cfg.ModelConfig(mixer)
	B := max(1, cfg.TokenBudget/T)
	tokens := B * T
	row := ThroughputRow{Mixer: mixer, T: T, Batch: B}
	cm, err := CostModel(mcfg)
	if err != nil {
		return row, err
	}
	pred := cm.Train(T)
	row.TrainFLOPs, row.TrainElementwise = pred.MatMul, pred.Elementwise
	row.PredictedTokensPerSec = 1 / pred.Seconds(b.res.Machine.MatMulGFLOPs*1e9, b.res.Machine.ElementwiseGops*1e9)
	row.EstimatedMB = benchTrainBytes(mcfg, B, T) / (1 << 20)
	if limit := cfg.MaxMemoryGB * 1024; row.EstimatedMB > limit {
		row.Skipped = fmt.Sprintf("estimated peak memory %.1f GB exceeds max_memory_gb=%g", row.EstimatedMB/1024,
			cfg.MaxMemoryGB)
		return row, nil
	}

	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(T)))
	data := make([][]int32, B)
	for i := range data {
		data[i] = make([]int32, T+1)
		for j := range data[i] {
			data[i][j] = int32(rng.IntN(cfg.Vocab))
		}
	}
	batches, err := fit.NewSliceBatches([][]*tensors.Tensor{{tensors.FromValue(data)}})
	if err != nil {
		return row, err
	}
	fc := fit.DefaultConfig()
	fc.Steps, fc.WarmupSteps, fc.EvalEvery, fc.LR, fc.Seed = cfg.Warmup+cfg.Steps, 0, 0, 1e-3, cfg.Seed
	lossFn := func(ctx *context.Context, in []*Node) *Node { return decoder.NextTokenLoss(ctx, mcfg, in[0]) }

	goCtx, cancel := stdctx.WithCancel(stdctx.Background())
	defer cancel()
	start := time.Now()
	var cpuMark float64
	var cpuTimed float64
	onStep := func(step int, m fit.Metrics) {
		now := benchCPUSeconds()
		if step > cfg.Warmup {
			row.StepSeconds = append(row.StepSeconds, float64(tokens)/m.TokensPerSec)
			cpuTimed += now - cpuMark
			row.Loss = m.Loss
			if cfg.MaxSeconds > 0 && time.Since(start).Seconds() > cfg.MaxSeconds && step < fc.Steps {
				row.Note = fmt.Sprintf("%d of %d timed steps (max_seconds=%g)", len(row.StepSeconds), cfg.Steps,
					cfg.MaxSeconds)
				cancel()
			}
		}
		cpuMark = now
	}
	mem := startBenchMemory()
	_, err = fit.Train(b.backend, run.NewContext(cfg.Seed), lossFn, batches, nil, fc, fit.Progress(nil),
		fit.TokensPerBatch(tokens), fit.OnStep(onStep), fit.WithContext(goCtx))
	row.PeakMB, row.BaseMB, row.PeakHeapMB = mem.stop()
	if err != nil && !(row.Note != "" && errors.Is(err, stdctx.Canceled)) {
		return row, err
	}
	row.TokensPerSec = float64(tokens) / stats.Median(row.StepSeconds)
	if cpuTimed > 0 {
		row.TokensPerCPUSec = float64(tokens*len(row.StepSeconds)) / cpuTimed
	}
	return row, nil
}

// NormaliseThroughput fills the ratio fields of the rows (see ThroughputRow) from their measurements and
// predictions: per mixer relative to its first row that ran, and against the attention row of the same T.
func NormaliseThroughput(rows []ThroughputRow) {
	ref := map[string]ThroughputRow{}
	att := map[int]ThroughputRow{}
	for _, r := range rows {
		if r.Skipped != "" {
			continue
		}
		if _, ok := ref[r.Mixer]; !ok {
			ref[r.Mixer] = r
		}
		if r.Mixer == decoder.MixerAttention {
			att[r.T] = r
		}
	}
	for i := range rows {
		r := &rows[i]
		if r.Skipped != "" {
			continue
		}
		r0 := ref[r.Mixer]
		r.PredictedRel = r.PredictedTokensPerSec / r0.PredictedTokensPerSec
		r.PredictedRelMatMul = r0.TrainFLOPs / r.TrainFLOPs
		r.MeasuredRel = r.TokensPerSec / r0.TokensPerSec
		r.MeasuredRelCPU = benchRatio(r.TokensPerCPUSec, r0.TokensPerCPUSec)
		r.Agreement = r.MeasuredRelCPU / r.PredictedRel
		if a, ok := att[r.T]; ok {
			r.PredictedSpeedup = r.PredictedTokensPerSec / a.PredictedTokensPerSec
			r.MeasuredSpeedup = benchRatio(r.TokensPerCPUSec, a.TokensPerCPUSec)
		} else {
			r.PredictedSpeedup, r.MeasuredSpeedup = 0, 0
		}
	}
}

// benchRatio returns a/b, or 0 when b is not positive (CPU time unavailable).
func benchRatio(a, b float64) float64 {
	if !(b > 0) {
		return 0
	}
	return a / b
}

// RunDecode measures the time of decoding one token (batch 1) at position context−1 for every (mixer, context) of
// cfg, with the state filled with random values and attention's KV cache holding context positions, next to
// theory/cost's predicted work and state size (DecodeRow). The step is compiled once per configuration, run
// cfg.Warmup times untimed, then cfg.DecodeTokens times, feeding each new state back.
func RunDecode(cfg BenchConfig, opts ...BenchOption) (*BenchResult, error) {
	b, restore, err := startBench("decode", cfg, opts)
	if err != nil {
		return nil, err
	}
	defer restore()
	for _, mixer := range cfg.Mixers {
		for _, n := range cfg.Contexts {
			row, err := b.decodeOne(mixer, n)
			if err != nil {
				return nil, errors.WithMessagef(err, "bench decode %s context=%d", mixer, n)
			}
			b.res.Decode = append(b.res.Decode, row)
			NormaliseDecode(b.res.Decode)
			b.logf("bench: %-9s context=%-6d %8.2f ms/token %8.2f cpu-ms/token (predicted %.3f), state %d bytes",
				mixer, n, row.MsPerToken, row.CPUMsPerToken, row.PredictedMsPerToken, row.StateBytes)
			if err := b.save(); err != nil {
				return nil, err
			}
		}
	}
	return b.finish()
}

// decodeOne runs one decoding configuration.
func (b *benchRun) decodeOne(mixer string, n int) (DecodeRow, error) {
	cfg := b.cfg
	mcfg := cfg.ModelConfig(mixer)
	mcfg.MaxLen = n
	row := DecodeRow{Mixer: mixer, Context: n}
	cm, err := CostModel(mcfg)
	if err != nil {
		return row, err
	}
	floatBytes := mcfg.DTypeOf().Size()
	pred := cm.Decode(n)
	row.DecodeFLOPs, row.DecodeElementwise = pred.MatMul, pred.Elementwise
	row.PredictedMsPerToken = 1e3 * pred.Seconds(b.res.Machine.MatMulGFLOPs*1e9, b.res.Machine.ElementwiseGops*1e9)
	row.StateBytes = cm.StateBytes(n, 1, floatBytes)
	for _, s := range decoder.StateShapes(mcfg, 1, n) {
		row.MeasuredStateBytes += int(s.Memory())
	}

	ctx := run.NewContext(cfg.Seed)
	if _, err := context.ExecOnce(b.backend, ctx, func(ctx *context.Context, tokens *Node) *Node {
		return decoder.Logits(ctx, mcfg, tokens)
	}, [][]int32{{1, 2}}); err != nil { // creates the variables
		return row, errors.Wrap(err, "initialising the model")
	}
	step, err := context.NewExec(b.backend, ctx.Reuse(), func(ctx *context.Context, in []*Node) []*Node {
		logits, state := decoder.Step(ctx, mcfg, in[0], in[1], in[2:])
		return append([]*Node{logits}, state...)
	})
	if err != nil {
		return row, errors.Wrap(err, "building the decoding step")
	}
	state := decoder.NewState(mcfg, 1, n)
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(n)))
	for _, s := range state {
		s.MustMutableFlatData(func(flat any) { // positive values of moderate size: no denormals, den > 0
			switch f := flat.(type) {
			case []float32:
				for i := range f {
					f[i] = float32(0.1 + 0.9*rng.Float64())
				}
			case []float64:
				for i := range f {
					f[i] = 0.1 + 0.9*rng.Float64()
				}
			}
		})
	}
	token := tensors.FromValue([][]int32{{3}})
	pos := int32(n - 1)
	one := func() error {
		args := []any{token, pos}
		for _, s := range state {
			args = append(args, s)
		}
		outs, err := step.Exec(args...)
		if err != nil {
			return err
		}
		outs[0].FinalizeAll()
		for _, s := range state {
			s.FinalizeAll()
		}
		state = outs[1:]
		return nil
	}
	start := time.Now()
	for i := 0; i < cfg.Warmup; i++ {
		if err := one(); err != nil {
			return row, errors.Wrap(err, "decoding")
		}
	}
	cpu0 := benchCPUSeconds()
	for i := 0; i < cfg.DecodeTokens; i++ {
		t0 := time.Now()
		if err := one(); err != nil {
			return row, errors.Wrap(err, "decoding")
		}
		row.StepMs = append(row.StepMs, 1e3*time.Since(t0).Seconds())
		if cfg.MaxSeconds > 0 && time.Since(start).Seconds() > cfg.MaxSeconds {
			break
		}
	}
	row.MsPerToken = stats.Median(row.StepMs)
	row.CPUMsPerToken = 1e3 * (benchCPUSeconds() - cpu0) / float64(len(row.StepMs))
	for _, s := range state {
		s.FinalizeAll()
	}
	return row, nil
}

// NormaliseDecode fills the ratio fields of the rows, per mixer relative to its first row.
func NormaliseDecode(rows []DecodeRow) {
	ref := map[string]DecodeRow{}
	for _, r := range rows {
		if _, ok := ref[r.Mixer]; !ok {
			ref[r.Mixer] = r
		}
	}
	for i := range rows {
		r := &rows[i]
		r0 := ref[r.Mixer]
		r.PredictedRel = r.PredictedMsPerToken / r0.PredictedMsPerToken
		r.MeasuredRel = r.MsPerToken / r0.MsPerToken
	}
}

// benchTrainBytes estimates the peak memory of a training step in bytes, for the skip rule: four copies of the
// parameters (weights, gradients, two AdamW moments), and the activations per token (4·V for the logits and, per
// layer, 24·D + 10·F for the block plus the mixer's own): attention keeps 8·D per token and 6 floats per score
// (b, h, t, s) of every layer; ProtoT 8·D + 8·R·Q; DeltaNet 90·D + 3.5·(T/C)·H·d (its chunk loop's slices grow with
// the number of chunks); Mamba 6·d_in + 12·d_in·N. The constants were fitted to the peak RSS of BenchSmall runs on
// the pure-Go backend (attention 24 bytes per score element, measured 20–25); they err on the high side.
func benchTrainBytes(m decoder.Config, B, T int) float64 {
	f := float64(m.DTypeOf().Size())
	D, F, V, L := float64(m.Width), float64(m.FFNWidth()), float64(m.VocabSize), float64(m.NumLayers)
	perLayer := 24*D + 10*F
	extra := 0.0
	switch m.Mixer {
	case decoder.MixerAttention:
		perLayer += 8 * D
		extra = L * float64(B) * float64(m.Attention.NumHeads) * float64(T) * float64(T) * 6 * f
	case decoder.MixerProtoT:
		perLayer += 8*D + 8*float64(m.ProtoT.NumPrototypes)*float64(m.ProtoT.ChunkLen(T))
	case decoder.MixerDeltaNet:
		hd := float64(m.DeltaNet.NumHeads * m.DeltaNet.HeadSize(m.Width))
		chunks := float64((T + m.DeltaNet.ChunkSize - 1) / m.DeltaNet.ChunkSize)
		perLayer += 90*D + 3.5*chunks*hd
	case decoder.MixerMamba:
		d, N := float64(m.Mamba.Inner(m.Width)), float64(m.Mamba.StateSize)
		perLayer += 6*d + 12*d*N
	}
	params := 4 * float64(m.NumParams()) * f
	return params + float64(B*T)*(L*perLayer+4*V)*f + extra
}

// benchMachine measures the backend's matrix-product and elementwise rates (best of 3) and the load.
func benchMachine(backend backends.Backend) BenchMachine {
	m := BenchMachine{Backend: run.BackendConfig(), NumCPU: runtime.NumCPU(), LoadStart: benchLoad()}
	const n, e = 512, 1 << 22
	mm := MustNewExec(backend, func(x, y *Node) *Node { return MatMul(x, y) })
	x := tensors.FromShape(shapes.Make(dtypes.Float32, n, n))
	ew := MustNewExec(backend, func(x *Node) *Node { return Add(Mul(Exp(x), x), x) })
	v := tensors.FromShape(shapes.Make(dtypes.Float32, e))
	best := func(fn func()) (wall, cpu float64) {
		fn() // compile
		wall, cpu = math.Inf(1), math.Inf(1)
		for i := 0; i < 3; i++ {
			t0, c0 := time.Now(), benchCPUSeconds()
			fn()
			wall, cpu = min(wall, time.Since(t0).Seconds()), min(cpu, benchCPUSeconds()-c0)
		}
		return wall, cpu
	}
	wall, cpu := best(func() { mm.MustExec(x, x)[0].FinalizeAll() })
	m.MatMulGFLOPs = 2 * n * n * n / wall / 1e9
	if cpu > 0 {
		m.MatMulGFLOPsPerCPUSec = 2 * n * n * n / cpu / 1e9
	}
	wall, _ = best(func() { ew.MustExec(v)[0].FinalizeAll() })
	m.ElementwiseGops = 3 * e / wall / 1e9
	return m
}

// benchLoad returns the 1-minute load average from /proc/loadavg, or 0 where it is unavailable.
func benchLoad() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	if _, err := fmt.Sscan(string(b), &l); err != nil {
		return 0
	}
	return l
}

// benchCPUSeconds returns the process's user + system CPU time from /proc/self/stat (clock ticks of 1/100 s), or
// 0 where it is unavailable (then the CPU-second rates are 0).
func benchCPUSeconds() float64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 { // fields 3… of proc(5): utime and stime are fields 14 and 15
		return 0
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return (ut + st) / 100
}

// benchMemory samples the process's memory while a configuration runs.
type benchMemory struct {
	done       chan struct{}
	wg         sync.WaitGroup
	base       float64
	resetHWM   bool
	peak, heap float64 // bytes
}

// startBenchMemory collects garbage, returns freed memory to the OS, records the RSS as the base, resets the
// kernel's RSS high-water mark (where /proc/self/clear_refs allows it) and samples VmRSS and the Go heap every 5 ms.
func startBenchMemory() *benchMemory {
	runtime.GC()
	debug.FreeOSMemory()
	m := &benchMemory{done: make(chan struct{}), base: benchProcStatus("VmRSS")}
	m.resetHWM = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			m.peak = max(m.peak, benchProcStatus("VmRSS"))
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				m.heap = max(m.heap, float64(sample[0].Value.Uint64()))
			}
			select {
			case <-m.done:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// stop ends the sampling and returns the peak RSS, the base RSS and the peak Go heap, in MB.
func (m *benchMemory) stop() (peakMB, baseMB, heapMB float64) {
	close(m.done)
	m.wg.Wait()
	if m.resetHWM {
		m.peak = max(m.peak, benchProcStatus("VmHWM"))
	}
	const mb = 1 << 20
	return m.peak / mb, m.base / mb, m.heap / mb
}

// benchProcStatus returns a "kB" field of /proc/self/status in bytes, or 0 where it is unavailable.
func benchProcStatus(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}
