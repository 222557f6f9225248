package fit

import (
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/layers/norm"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train/loss"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// Tiny float32 next-token model: ids [B, T] int32 → embedding [V, D] → RMSNorm → Dense(V) → logits [B, T, V];
// targets [B, T, 1]; mean cross-entropy.
type tokenModel struct{ V, D, B, T int }

func (m tokenModel) loss(scope *model.Scope, inputs []*Node) *Node {
	ids, targets := inputs[0], inputs[1]
	x := layers.Embedding(scope.At("embed"), ids, dtypes.Float32, m.V, m.D) // [B, T, D]
	x = norm.RMSNorm(scope.At("norm"), x).Done()
	logits := layers.Dense(scope.At("head"), x, true, m.V) // [B, T, V]
	logits.AssertDims(m.B, m.T, m.V)
	return ReduceAllMean(loss.SparseCategoricalCrossEntropyLogits([]*Node{targets}, []*Node{logits}))
}

// batches: n batches of a counting sequence (next = id + 1 mod V) from random starts, so the task is learnable.
func (m tokenModel) batches(seed uint64, n int) [][]*tensors.Tensor {
	rng := wbtest.RNG(seed)
	out := make([][]*tensors.Tensor, n)
	for i := range out {
		ids := make([]int32, m.B*m.T)
		targets := make([]int32, m.B*m.T)
		for b := 0; b < m.B; b++ {
			start := rng.IntN(m.V)
			for t := 0; t < m.T; t++ {
				ids[b*m.T+t] = int32((start + t) % m.V)
				targets[b*m.T+t] = int32((start + t + 1) % m.V)
			}
		}
		out[i] = []*tensors.Tensor{tensors.FromFlatDataAndDimensions(ids, m.B, m.T),
			tensors.FromFlatDataAndDimensions(targets, m.B, m.T, 1)}
	}
	return out
}

func TestTrain_Float32TokenModel(t *testing.T) {
	m := tokenModel{V: 11, D: 8, B: 3, T: 7}
	cfg := DefaultConfig()
	cfg.Steps, cfg.WarmupSteps, cfg.LR, cfg.EvalEvery, cfg.EvalBatches = 40, 4, 0.05, 20, 2
	dir := t.TempDir()
	hist, err := Train(wbtest.Backend(t), run.NewStore(3), m.loss, mustSlice(t, m.batches(1, 4)),
		mustSlice(t, m.batches(2, 2)), cfg, Progress(nil), CheckpointDir(dir))
	if err != nil {
		t.Fatalf("%+v", err)
	}
	losses := hist.Losses()
	if !(losses[len(losses)-1] < 0.5*losses[0]) {
		t.Errorf("loss went from %g to %g; want it at least halved", losses[0], losses[len(losses)-1])
	}
	if m0 := hist.Steps[0]; m0.TokensPerSec <= 0 || m0.LR != float64(float32(cfg.LR/4)) {
		t.Errorf("first step metrics %+v; want lr = LR/4 in float32", m0)
	}
	vars := model.NewStore()
	if _, err := LoadLatest(dir, vars); err != nil {
		t.Fatalf("%+v", err)
	}
	if v := vars.GetVariable(model.JoinPath(OptimizerScope+"/m/embed", "embeddings")); v == nil ||
		v.DType() != dtypes.Float32 {
		t.Errorf("float32 moment of the embeddings not in the checkpoint: %v", v)
	}
}

// BenchmarkTrainStep measures one compiled training step (forward, backward, AdamW) of the float32 token model,
// V=64, D=32, B=8, T=32 (256 tokens per step).
func BenchmarkTrainStep(b *testing.B) {
	m := tokenModel{V: 64, D: 32, B: 8, T: 32}
	batches := m.batches(1, 1)
	cfg := DefaultConfig()
	cfg.Steps = 1 << 30
	tr := &trainer{backend: wbtest.Backend(b), vars: run.NewStore(1), loss: m.loss, cfg: cfg, hist: &History{},
		train: mustSlice(b, batches)}
	if err := tr.start(); err != nil {
		b.Fatalf("%+v", err)
	}
	if _, err := execute(tr.stepExec, batches[0]); err != nil { // compile
		b.Fatalf("%+v", err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		outs, err := execute(tr.stepExec, batches[0])
		if err != nil {
			b.Fatalf("%+v", err)
		}
		_ = scalar(outs[0])
	}
	b.ReportMetric(float64(m.B*m.T)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}
