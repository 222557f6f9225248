package speed

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/timing"
	"github.com/protolab/protolab/workbench/meter"
)

// decode measures the time of decoding one token (batch 1) at position context−1 for every (mixer, context) of
// cfg (models/timing's Decode), with the state filled with random values and attention's KV cache holding context
// positions, next to theory/cost's predicted work and state size (DecodeRow). The step is compiled once per
// configuration, run cfg.Warmup times untimed, then cfg.DecodeTokens times, feeding each new state back; the median
// step time is ms/token, and its spread is kept (stats.Spread).
func (b *bench) decode() error {
	cfg := b.cfg
	for _, mixer := range cfg.Mixers {
		if mixer == MixerAttentionChunked {
			continue // decoding has one attention form: the "attention" rows
		}
		for _, n := range cfg.decodeContexts() {
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
	cm, err := timing.CostModel(mcfg)
	if err != nil {
		return row, err
	}
	floatBytes := mcfg.DTypeOf().Size()
	pred := cm.Decode(n)
	row.DecodeFLOPs, row.DecodeElementwise = pred.MatMul, pred.Elementwise
	row.PredictedMsPerToken = 1e3 * pred.Seconds(b.res.Machine.MatMulGFLOPs*1e9, b.res.Machine.ElementwiseGops*1e9)
	row.StateBytes = cm.StateBytes(n, 1, floatBytes)
	dec, err := timing.Decode(b.backend, mcfg, n, b.settings(cfg.DecodeTokens))
	if err != nil {
		return row, err
	}
	row.MeasuredStateBytes, row.StepMs, row.MsPerToken, row.Spread = dec.StateBytes, dec.StepMs, dec.MsPerToken,
		dec.Spread
	row.CPUMsPerToken, row.CPUResolutionMs = dec.CPUMsPerToken, dec.CPUResolutionMs
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
