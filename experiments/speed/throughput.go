package speed

import (
	"fmt"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/timing"
	"github.com/protolab/protolab/workbench/meter"
)

// throughput measures training throughput and peak memory for every (mixer, T) of the config (models/timing's
// Train), next to theory/cost's predictions (ThroughputRow). Each configuration is compiled once, run cfg.Warmup
// untimed steps, then cfg.Steps timed ones, whose median gives tokens/s and whose spread is kept (stats.Spread). A
// configuration whose estimated memory (timing.TrainBytes) exceeds max_memory_gb is skipped with the reason
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
					row.Label(), T, row.Batch, row.TokensPerSec, row.TokensPerCPUSec, row.PredictedTokensPerSec,
					row.PeakMB)
			}
			if err := b.save(); err != nil {
				return err
			}
		}
	}
	return nil
}

// trainOne runs one training configuration: B = token_budget/T sequences of T tokens.
func (b *bench) trainOne(mixer string, T int) (ThroughputRow, error) {
	cfg := b.cfg
	mcfg := cfg.ModelConfig(mixer)
	B := max(1, cfg.TokenBudget/T)
	row := ThroughputRow{Mixer: mixer, T: T, Batch: B}
	if mcfg.Mixer == decoder.MixerAttention {
		row.Form = attention.KindFull
		if mcfg.Attention.Chunked(T) {
			row.Form = attention.KindChunked
		}
	}
	cm, err := timing.CostModel(mcfg)
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
	row.EstimatedMB = timing.TrainBytes(mcfg, B, T) / (1 << 20)
	if limit := cfg.MaxMemoryGB * 1024; row.EstimatedMB > limit {
		row.Skipped = fmt.Sprintf("estimated peak memory %.1f GB exceeds max_memory_gb=%g", row.EstimatedMB/1024,
			cfg.MaxMemoryGB)
		return row, nil
	}

	tr, err := timing.Train(b.o.Context, b.backend, mcfg, B, T, b.settings(cfg.Steps))
	if err != nil {
		return row, err
	}
	if tr.Stopped {
		row.Note = fmt.Sprintf("%d of %d timed steps (max_seconds=%g)", len(tr.StepSeconds), cfg.Steps,
			cfg.MaxSeconds)
	}
	row.StepSeconds, row.TokensPerSec, row.Spread, row.TokensPerCPUSec = tr.StepSeconds, tr.TokensPerSec, tr.Spread,
		tr.TokensPerCPUSec
	row.Loss, row.PeakMB, row.BaseMB, row.PeakHeapMB = tr.Loss, tr.PeakMB, tr.BaseMB, tr.PeakHeapMB
	row.GFLOPsPerSec = row.TrainFLOPs * row.TokensPerSec / 1e9
	row.RoofFraction = meter.Ratio(row.GFLOPsPerSec, b.res.Machine.RoofGFLOPs)
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
	if r.Form == "" || strings.HasSuffix(r.Mixer, r.Form) ||
		(r.Mixer == decoder.MixerAttention && r.Form == attention.KindFull) {
		return r.Mixer
	}
	return r.Mixer + "[" + r.Form + "]"
}
