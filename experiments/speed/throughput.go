package speed

import (
	stdctx "context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	. "github.com/gomlx/gomlx/core/graph"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// throughput measures training throughput and peak memory for every (mixer, T) of the config, next to
// theory/cost's predictions (ThroughputRow). Each configuration is compiled once, run cfg.Warmup untimed steps, then
// cfg.Steps timed ones, whose median gives tokens/s and whose spread is kept (stats.Spread). A configuration whose estimated memory exceeds max_memory_gb is skipped with the reason
// recorded.
func (b *bench) throughput() error {
	cfg := b.cfg
	for _, mixer := range cfg.Mixers {
		for _, T := range cfg.Contexts {
			if err := b.o.Err(); err != nil {
				return err
			}
			row, err := b.trainOne(mixer, T)
			if err != nil {
				return errors.WithMessagef(err, "speed: throughput %s T=%d", mixer, T)
			}
			b.res.Throughput = append(b.res.Throughput, row)
			NormaliseThroughput(b.res.Throughput)
			if row.Skipped != "" {
				b.logf("%-9s T=%-6d skipped: %s", mixer, T, row.Skipped)
			} else {
				b.logf("%-9s T=%-6d B=%-4d %9.0f tokens/s %9.0f tokens/cpu-s (predicted %.0f), peak %.0f MB",
					row.Label(), T, row.Batch, row.TokensPerSec, row.TokensPerCPUSec, row.PredictedTokensPerSec, row.PeakMB)
			}
			if err := b.save(); err != nil {
				return err
			}
		}
	}
	return nil
}

// trainOne runs one training configuration.
func (b *bench) trainOne(mixer string, T int) (ThroughputRow, error) {
	cfg := b.cfg
	mcfg := cfg.ModelConfig(mixer)
	B := max(1, cfg.TokenBudget/T)
	tokens := B * T
	row := ThroughputRow{Mixer: mixer, T: T, Batch: B}
	if mcfg.Mixer == decoder.MixerAttention {
		row.Form = attention.KindFull
		if mcfg.Attention.Chunked(T) {
			row.Form = attention.KindChunked
		}
	}
	cm, err := CostModel(mcfg)
	if err != nil {
		return row, err
	}
	if b.res.Architectures == nil {
		b.res.Architectures = map[string]lm.Architecture{}
	}
	b.res.Architectures[mixer] = lm.ArchitectureOf(lm.Config{Model: mcfg, Head: lm.HeadDense})
	pred := cm.Train(T)
	row.TrainFLOPs, row.TrainElementwise = pred.MatMul, pred.Elementwise
	row.PredictedTokensPerSec = 1 / pred.Seconds(b.res.Machine.MatMulGFLOPs*1e9, b.res.Machine.ElementwiseGops*1e9)
	row.EstimatedMB = trainBytes(mcfg, B, T) / (1 << 20)
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
	lossFn := func(scope *model.Scope, in []*Node) *Node { return decoder.NextTokenLoss(scope, mcfg, in[0]) }

	goCtx, cancel := stdctx.WithCancel(b.o.Context)
	defer cancel()
	start := time.Now()
	var cpuMark float64
	var cpuTimed float64
	onStep := func(step int, m fit.Metrics) {
		now := meter.CPUSeconds()
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
	mem := meter.StartMemory()
	_, err = fit.Train(b.backend, run.NewStore(cfg.Seed), lossFn, batches, nil, fc, fit.Progress(nil),
		fit.TokensPerBatch(tokens), fit.OnStep(onStep), fit.WithContext(goCtx), fit.NoDecay(mcfg.NoDecay()...))
	row.PeakMB, row.BaseMB, row.PeakHeapMB = mem.Stop()
	if err != nil && !(row.Note != "" && errors.Is(err, stdctx.Canceled) && b.o.Err() == nil) {
		return row, err
	}
	perStep := make([]float64, len(row.StepSeconds))
	for i, sec := range row.StepSeconds {
		perStep[i] = float64(tokens) / sec
	}
	row.Spread = stats.NewSpread(perStep)
	row.TokensPerSec = stats.Median(perStep)
	row.GFLOPsPerSec = row.TrainFLOPs * row.TokensPerSec / 1e9
	row.RoofFraction = meter.Ratio(row.GFLOPsPerSec, b.res.Machine.RoofGFLOPs)
	if meter.CPUResolved(cpuTimed) { // else 0, not measured: the CPU clock cannot resolve the timed steps
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
		r.MeasuredRelCPU = meter.Ratio(r.TokensPerCPUSec, r0.TokensPerCPUSec)
		r.Agreement = r.MeasuredRelCPU / r.PredictedRel
		if a, ok := att[r.T]; ok {
			r.PredictedSpeedup = r.PredictedTokensPerSec / a.PredictedTokensPerSec
			r.MeasuredSpeedup = meter.Ratio(r.TokensPerCPUSec, a.TokensPerCPUSec)
		} else {
			r.PredictedSpeedup, r.MeasuredSpeedup = 0, 0
		}
	}
}

// Label names the row's mixer for tables and logs: the mixer, followed by the attention form in brackets when the
// name does not already say it ("attention[chunked]" when attention.kind chose the chunked form).
func (r ThroughputRow) Label() string {
	if r.Form == "" || strings.HasSuffix(r.Mixer, r.Form) || (r.Mixer == decoder.MixerAttention && r.Form == attention.KindFull) {
		return r.Mixer
	}
	return r.Mixer + "[" + r.Form + "]"
}
