package timing

import (
	"math/rand/v2"
	"time"

	. "github.com/gomlx/gomlx/core/graph"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/meter"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Decoding is the measurement of one decoding configuration.
type Decoding struct {
	StepMs        []float64    // wall time of every timed step
	MsPerToken    float64      // their median
	Spread        stats.Spread // of StepMs: median, quartiles and extremes
	CPUMsPerToken float64      // process CPU time per timed step
	// CPUResolutionMs is the CPU clock's resolution divided by the timed steps: CPUMsPerToken below ten of these is
	// not resolved (meter.FormatResolved).
	CPUResolutionMs float64
	StateBytes      int // the decoding state of one sequence, all layers, from decoder.StateShapes
}

// Decode times the decoding of one token (batch 1) at position n−1 by the decoder m (its decoding step
// decoder.Step, compiled once, with weights seeded by s.Seed), with a state of capacity n (m.MaxLen is set to n;
// attention's KV cache holds n positions) filled with random values in [0.1, 1) seeded by s.Seed and n: s.Warmup
// untimed steps, then s.Steps timed ones, each feeding its new state back, stopping early after MaxSeconds.
func Decode(backend compute.Backend, m decoder.Config, n int, s Settings) (Decoding, error) {
	var res Decoding
	m.MaxLen = n
	for _, sh := range decoder.StateShapes(m, 1, n) {
		res.StateBytes += int(sh.Memory())
	}
	scope := run.NewStore(s.Seed)
	if _, err := model.ExecOnce(backend, scope, func(scope *model.Scope, tokens *Node) *Node {
		return decoder.Logits(scope, m, tokens)
	}, [][]int32{{1, 2}}); err != nil { // creates the variables
		return res, errors.Wrap(err, "initialising the model")
	}
	step, err := model.NewExec(backend, scope, func(scope *model.Scope, in []*Node) []*Node {
		logits, state := decoder.Step(scope, m, in[0], in[1], in[2:])
		return append([]*Node{logits}, state...)
	})
	if err != nil {
		return res, errors.Wrap(err, "building the decoding step")
	}
	state := decoder.NewState(m, 1, n)
	rng := rand.New(rand.NewPCG(s.Seed, uint64(n)))
	for _, st := range state {
		st.MustMutableFlatData(func(flat any) { // positive values of moderate size: no denormals, den > 0
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
		for _, st := range state {
			args = append(args, st)
		}
		outs, err := step.Exec(args...)
		if err != nil {
			return err
		}
		outs[0].FinalizeAll()
		for _, st := range state {
			st.FinalizeAll()
		}
		state = outs[1:]
		return nil
	}
	start := time.Now()
	for i := 0; i < s.Warmup; i++ {
		if err := one(); err != nil {
			return res, errors.Wrap(err, "decoding")
		}
	}
	cpu0 := meter.CPUSeconds()
	for i := 0; i < s.Steps; i++ {
		t0 := time.Now()
		if err := one(); err != nil {
			return res, errors.Wrap(err, "decoding")
		}
		res.StepMs = append(res.StepMs, 1e3*time.Since(t0).Seconds())
		if s.MaxSeconds > 0 && time.Since(start).Seconds() > s.MaxSeconds {
			break
		}
	}
	res.MsPerToken = stats.Median(res.StepMs)
	res.Spread = stats.NewSpread(res.StepMs)
	res.CPUMsPerToken = 1e3 * (meter.CPUSeconds() - cpu0) / float64(len(res.StepMs))
	res.CPUResolutionMs = 1e3 * meter.CPUResolution() / float64(len(res.StepMs))
	for _, st := range state {
		st.FinalizeAll()
	}
	return res, nil
}
