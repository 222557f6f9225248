package timing

import (
	stdctx "context"
	"math/rand/v2"
	"time"

	. "github.com/gomlx/gomlx/core/graph"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Settings say how one configuration is timed (docs/spec/protot.md §7.2): Warmup untimed steps (the first compiles),
// then Steps timed ones.
type Settings struct {
	Warmup int // untimed steps first; ≥ 1
	Steps  int // timed steps; > 0
	// MaxSeconds stops timing after the first timed step that ends past this many seconds since the configuration
	// started (compilation included); ≤ 0 means no limit.
	MaxSeconds float64
	Seed       uint64 // the weights and the token draws
}

// Training is the measurement of one training configuration: the timed steps, the rates they give and the memory
// the whole run (compilation, warm-up and timed steps) used.
type Training struct {
	StepSeconds     []float64    // wall time of each timed step
	TokensPerSec    float64      // the median over the timed steps of B·T / step time
	Spread          stats.Spread // of the timed steps' tokens/s: median, quartiles and extremes
	TokensPerCPUSec float64      // B·T·steps / process CPU seconds of the timed steps; 0: the clock cannot resolve them
	Loss            float64      // the last step's loss (a sanity check)
	// PeakMB, BaseMB and PeakHeapMB are meter.Memory's: the process's peak resident set over the run, the resident
	// set just before (after a GC), and the peak of the Go heap's objects.
	PeakMB, BaseMB, PeakHeapMB float64
	// Stopped says that MaxSeconds ended the timing before Steps timed steps.
	Stopped bool
}

// Train times training steps of the decoder m (workbench/fit's step: next-token loss, gradients, global-norm clipping
// and the AdamW update at lr 1e−3, the decoder's no-decay variables excluded) on one fixed batch of B sequences of T
// random tokens (T + 1 drawn per row, seeded by s.Seed and T), from weights seeded by s.Seed: s.Warmup untimed steps,
// then s.Steps timed ones, stopping early after MaxSeconds. The steps' tokens/s are B·T over fit's step times. ctx
// interrupts the run (its error is returned); a MaxSeconds stop is not an error.
func Train(ctx stdctx.Context, backend compute.Backend, m decoder.Config, B, T int, s Settings) (Training, error) {
	var res Training
	tokens := B * T
	rng := rand.New(rand.NewPCG(s.Seed, uint64(T)))
	data := make([][]int32, B)
	for i := range data {
		data[i] = make([]int32, T+1)
		for j := range data[i] {
			data[i][j] = int32(rng.IntN(m.VocabSize))
		}
	}
	batches, err := fit.NewSliceBatches([][]*tensors.Tensor{{tensors.FromValue(data)}})
	if err != nil {
		return res, err
	}
	fc := fit.DefaultConfig()
	fc.Steps, fc.WarmupSteps, fc.EvalEvery, fc.LR, fc.Seed = s.Warmup+s.Steps, 0, 0, 1e-3, s.Seed
	lossFn := func(scope *model.Scope, in []*Node) *Node { return decoder.NextTokenLoss(scope, m, in[0]) }

	goCtx, cancel := stdctx.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	var cpuMark float64
	var cpuTimed float64
	onStep := func(step int, fm fit.Metrics) {
		now := meter.CPUSeconds()
		if step > s.Warmup {
			res.StepSeconds = append(res.StepSeconds, float64(tokens)/fm.TokensPerSec)
			cpuTimed += now - cpuMark
			res.Loss = fm.Loss
			if s.MaxSeconds > 0 && time.Since(start).Seconds() > s.MaxSeconds && step < fc.Steps {
				res.Stopped = true
				cancel()
			}
		}
		cpuMark = now
	}
	mem := meter.StartMemory()
	_, err = fit.Train(backend, run.NewStore(s.Seed), lossFn, batches, nil, fc, fit.Progress(nil),
		fit.TokensPerBatch(tokens), fit.OnStep(onStep), fit.WithContext(goCtx), fit.NoDecay(m.NoDecay()...))
	res.PeakMB, res.BaseMB, res.PeakHeapMB = mem.Stop()
	if err != nil && !(res.Stopped && errors.Is(err, stdctx.Canceled) && ctx.Err() == nil) {
		return res, err
	}
	perStep := make([]float64, len(res.StepSeconds))
	for i, sec := range res.StepSeconds {
		perStep[i] = float64(tokens) / sec
	}
	res.Spread = stats.NewSpread(perStep)
	res.TokensPerSec = stats.Median(perStep)
	if meter.CPUResolved(cpuTimed) { // else 0, not measured: the CPU clock cannot resolve the timed steps
		res.TokensPerCPUSec = float64(tokens*len(res.StepSeconds)) / cpuTimed
	}
	return res, nil
}
