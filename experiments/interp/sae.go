package interp

import (
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/sae"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// SAEStats describes the sparse autoencoder of one layer, measured on the evaluation tokens.
type SAEStats struct {
	Layer    int     `json:"layer"`
	Features int     `json:"features"` // dictionary size F
	L0       float64 `json:"l0"`       // mean number of active features per token
	FVU      float64 `json:"fvu"`      // fraction of variance unexplained by the reconstruction
	Lambda   float64 `json:"lambda"`   // the L1 weight reached (adapted towards sae.model.target_l0)
	Dead     int     `json:"dead"`     // features that never fire on the evaluation tokens
	Seconds  float64 `json:"seconds"`  // training wall time
}

// trainSAE trains a ReLU SAE (layers/sae) of width D on the rows of acts (row-major [N, D]) with workbench/fit,
// in shuffled mini-batches of sc.BatchSize rows, and returns the codes of every row (row-major [N, F]), F and the
// SAE's statistics. The SAE is fitted to the tokens it is then scored on (it never sees their labels).
func trainSAE(backend backends.Backend, acts []float64, N, D int, sc SAEConfig, seed uint64) ([]float64, int,
	SAEStats, error) {
	start := time.Now()
	mc := sc.Model
	mc.Width = D
	mc.InitSeed = int64(seed)
	if err := mc.Validate(); err != nil {
		return nil, 0, SAEStats{}, errors.WithMessage(err, "sae.model")
	}
	F := mc.NumFeatures()
	B := min(sc.BatchSize, N)
	rng := run.RNG(seed, "interp/sae")
	var batches [][]*tensors.Tensor
	for epoch := 0; len(batches) < sc.Train.Steps && epoch < 1000; epoch++ {
		perm := rng.Perm(N)
		for from := 0; from+B <= N && len(batches) < sc.Train.Steps; from += B {
			x := make([]float32, B*D)
			for i, n := range perm[from : from+B] {
				for d := range D {
					x[i*D+d] = float32(acts[n*D+d])
				}
			}
			batches = append(batches, []*tensors.Tensor{tensors.FromFlatDataAndDimensions(x, B, D)})
		}
	}
	src, err := fit.NewSliceBatches(batches)
	if err != nil {
		return nil, 0, SAEStats{}, err
	}
	ctx := run.NewContext(seed)
	tc := sc.Train
	tc.Seed = seed
	if _, err := fit.Train(backend, ctx, sae.LossFn(mc), src, nil, tc, fit.Progress(nil)); err != nil {
		return nil, 0, SAEStats{}, errors.WithMessage(err, "interp: training the SAE")
	}
	all := make([]float32, N*D)
	for i, x := range acts[:N*D] {
		all[i] = float32(x)
	}
	exec, err := context.NewExec(backend, ctx.Reuse(), func(ctx *context.Context, x *graph.Node) []*graph.Node {
		t := sae.Loss(ctx, mc, x)
		return []*graph.Node{graph.ConvertDType(t.Features, dtypes.Float64), t.L0, t.FVU, t.Lambda}
	})
	if err != nil {
		return nil, 0, SAEStats{}, errors.Wrap(err, "interp: SAE codes")
	}
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(all, N, D))
	if err != nil {
		return nil, 0, SAEStats{}, errors.Wrap(err, "interp: SAE codes")
	}
	codes := tensors.MustCopyFlatData[float64](out[0])
	st := SAEStats{Features: F, L0: float64(tensors.ToScalar[float32](out[1])),
		FVU: float64(tensors.ToScalar[float32](out[2])), Lambda: float64(tensors.ToScalar[float32](out[3]))}
	for f := range F {
		fires := false
		for n := 0; n < N && !fires; n++ {
			fires = codes[n*F+f] > 0
		}
		if !fires {
			st.Dead++
		}
	}
	st.Seconds = time.Since(start).Seconds()
	return codes, F, st, nil
}
