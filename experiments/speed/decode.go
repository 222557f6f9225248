package speed

import (
	"math/rand/v2"
	"time"

	. "github.com/gomlx/gomlx/core/graph"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// decode measures the time of decoding one token (batch 1) at position context−1 for every (mixer, context) of
// cfg, with the state filled with random values and attention's KV cache holding context positions, next to
// theory/cost's predicted work and state size (DecodeRow). The step is compiled once per configuration, run
// cfg.Warmup times untimed, then cfg.DecodeTokens times, feeding each new state back; the median step time is
// ms/token, and its spread is kept (stats.Spread).
func (b *bench) decode() error {
	cfg := b.cfg
	for _, mixer := range cfg.Mixers {
		if mixer == MixerAttentionChunked {
			continue // decoding has one attention form: the "attention" rows
		}
		for _, n := range cfg.Contexts {
			if err := b.o.Err(); err != nil {
				return err
			}
			row, err := b.decodeOne(mixer, n)
			if err != nil {
				return errors.WithMessagef(err, "speed: decode %s context=%d", mixer, n)
			}
			b.res.Decode = append(b.res.Decode, row)
			NormaliseDecode(b.res.Decode)
			b.logf("%-9s context=%-6d %8.2f ms/token %8s cpu-ms/token (predicted %.3f), state %d bytes",
				mixer, n, row.MsPerToken, meter.FormatResolved(row.CPUMsPerToken, row.CPUResolutionMs),
				row.PredictedMsPerToken, row.StateBytes)
			if err := b.save(); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeOne runs one decoding configuration.
func (b *bench) decodeOne(mixer string, n int) (DecodeRow, error) {
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

	scope := run.NewStore(cfg.Seed)
	if _, err := model.ExecOnce(b.backend, scope, func(scope *model.Scope, tokens *Node) *Node {
		return decoder.Logits(scope, mcfg, tokens)
	}, [][]int32{{1, 2}}); err != nil { // creates the variables
		return row, errors.Wrap(err, "initialising the model")
	}
	step, err := model.NewExec(b.backend, scope, func(scope *model.Scope, in []*Node) []*Node {
		logits, state := decoder.Step(scope, mcfg, in[0], in[1], in[2:])
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
	cpu0 := meter.CPUSeconds()
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
	row.Spread = stats.NewSpread(row.StepMs)
	row.CPUMsPerToken = 1e3 * (meter.CPUSeconds() - cpu0) / float64(len(row.StepMs))
	row.CPUResolutionMs = 1e3 * meter.CPUResolution() / float64(len(row.StepMs))
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
