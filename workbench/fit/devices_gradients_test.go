package fit

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/wbtest"
)

// maskedLoss is a token model with a padding mask, whose mean runs over the unmasked tokens only, so that the shards
// of one batch can hold different numbers of counted tokens: x [B, T, F] float64, y [B, T], mask [B, T] of 0/1.
//
//	pred = tanh(x·W1 + b1)·w2              W1 [F, 5] "/masked/w1", b1 [5], w2 [5]
//	loss = Σ mask·(pred − y)² / Σ mask
func maskedLoss(scope *model.Scope, inputs []*Node) *Node {
	x, y, mask := inputs[0], inputs[1], inputs[2]
	g := x.Graph()
	c := scope.At("masked")
	w1 := c.VariableWithShape("w1", shapes.Make(dtypes.Float64, x.Shape().Dimensions[2], 5)).NodeValue(g)
	b1 := c.VariableWithValue("b1", []float64{0.1, -0.2, 0.3, 0, 0.05}).NodeValue(g)
	w2 := c.VariableWithValue("w2", []float64{0.7, -0.4, 0.9, 0.2, -0.6}).NodeValue(g)
	h := Tanh(Add(Einsum("btf,fh->bth", x, w1), Reshape(b1, 1, 1, 5))) // [B, T, 5]
	pred := Einsum("bth,h->bt", h, w2)                                 // [B, T]
	sq := Mul(Square(Sub(pred, y)), mask)                              // [B, T]
	return Div(ReduceAllSum(sq), ReduceAllSum(mask))
}

// lossAndGrads evaluates loss and its gradient with respect to every trainable variable on one device, by path.
func lossAndGrads(t *testing.T, exec *model.Exec, paths *[]string, batch []*tensors.Tensor) (float64,
	map[string][]float64) {
	t.Helper()
	args := make([]any, len(batch))
	for i, b := range batch {
		args[i] = b
	}
	outs, err := exec.Exec(args...)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	grads := map[string][]float64{}
	for i, p := range *paths {
		grads[p] = wbtest.Flat64(outs[1+i])
	}
	return tensors.ToScalar[float64](outs[0]), grads
}

func gradExec(t *testing.T, loss LossFn) (*model.Exec, *[]string) {
	paths := new([]string)
	exec, err := model.NewExec(wbtest.Backend(t), run.NewStore(7), func(scope *model.Scope,
		inputs []*Node) []*Node {
		l := loss(scope, inputs)
		g := l.Graph()
		var values []*Node
		*paths = nil
		for v := range scope.IterVariables() {
			if v.Trainable && v.DType().IsFloat() && v.InUseByGraph(g) {
				*paths = append(*paths, v.Path())
				values = append(values, v.NodeValue(g))
			}
		}
		return append([]*Node{l}, Gradient(l, values...)...)
	})
	if err != nil {
		t.Fatalf("%+v", err)
	}
	return exec, paths
}

// combineShards is the reference weighting of per-shard mean losses and gradients into the whole batch's, as the
// sharded step computes them (doc.go, "Several devices"): shard i enters with weight c_i/Σc, c_i being the number of
// terms its mean runs over (examples, or unmasked tokens). A shard with c_i = 0 has an undefined mean (0/0) and adds
// nothing. An unweighted mean over shards is right only when every c_i is equal.
func combineShards(losses []float64, grads []map[string][]float64, counts []float64) (float64,
	map[string][]float64) {
	total := 0.0
	for _, c := range counts {
		total += c
	}
	loss, out := 0.0, map[string][]float64{}
	for i, c := range counts {
		if c == 0 {
			continue
		}
		w := c / total
		loss += w * losses[i]
		for p, g := range grads[i] {
			if out[p] == nil {
				out[p] = make([]float64, len(g))
			}
			for j, v := range g {
				out[p][j] += w * v
			}
		}
	}
	return loss, out
}

// TestDevices_ShardedLossAndGradientsEqualFullBatch is the oracle of data parallelism: a batch is cut into N shards
// by the same host-side split the multi-device step uses, each shard's loss and gradients come from the one-device
// graph, and their count-weighted combination (combineShards) equals the full batch's loss and gradients to 1e-12,
// with unequal token counts per shard (a padding mask), a shard with no counted token, and a per-example mean.
func TestDevices_ShardedLossAndGradientsEqualFullBatch(t *testing.T) {
	const B, T, F = 6, 4, 3
	rng := wbtest.RNG(5)
	x := wbtest.Tensor64(wbtest.Normal(rng, B*T*F, 1), B, T, F)
	y := wbtest.Tensor64(wbtest.Normal(rng, B*T, 1), B, T)
	masks := map[string][]float64{ // rows 2 by 2: the shards of N = 3
		"unequal counts (8, 2, 5)": {1, 1, 1, 1, 1, 1, 1, 1 /**/, 1, 0, 0, 0, 0, 1, 0, 0 /**/, 1, 1, 1, 0, 1, 1, 0, 0},
		"an empty shard (4, 0, 7)": {1, 1, 0, 0, 1, 1, 0, 0 /**/, 0, 0, 0, 0, 0, 0, 0, 0 /**/, 1, 1, 1, 1, 1, 1, 1, 0},
	}
	maskedExec, maskedPaths := gradExec(t, maskedLoss)
	for name, m := range masks {
		batch := []*tensors.Tensor{x, y, wbtest.Tensor64(m, B, T)}
		for _, n := range []int{2, 3} {
			checkShardedEqualsFull(t, name, n, maskedExec, maskedPaths, batch, func(shard []*tensors.Tensor) float64 {
				sum := 0.0
				for _, v := range wbtest.Flat64(shard[2]) {
					sum += v
				}
				return sum
			}, name == "unequal counts (8, 2, 5)" && n == 3)
		}
	}
	// Per-example mean (fit's test MLP): every shard counts B/N examples, so the weights are equal.
	mlpExec, mlpPaths := gradExec(t, mlpLoss)
	labels := make([]int32, B)
	for i := range labels {
		labels[i] = int32(rng.IntN(testC))
	}
	batch := []*tensors.Tensor{wbtest.Tensor64(wbtest.Normal(rng, B*testF, 1), B, testF),
		tensors.FromFlatDataAndDimensions(labels, B, 1)}
	checkShardedEqualsFull(t, "per-example mean", 3, mlpExec, mlpPaths, batch, func(shard []*tensors.Tensor) float64 {
		return float64(shard[0].Shape().Dimensions[0])
	}, false)
}

// checkShardedEqualsFull splits batch over n devices, combines the shards' losses and gradients with combineShards
// and the counts count gives, and compares them with the full batch's. With unequalMatters it also checks that the
// unweighted mean over shards differs, so that the data really exercise the weights.
func checkShardedEqualsFull(t *testing.T, name string, n int, exec *model.Exec, paths *[]string,
	batch []*tensors.Tensor, count func([]*tensors.Tensor) float64, unequalMatters bool) {
	t.Helper()
	s, err := newSharding(n)
	if err != nil {
		t.Fatalf("%+v", err)
	}
	parts, err := s.split(batch, "training batch")
	if err != nil {
		t.Fatalf("%s: %+v", name, err)
	}
	defer finalizeAll(parts)
	var losses, counts []float64
	var grads []map[string][]float64
	for i := 0; i < n; i++ {
		shard := make([]*tensors.Tensor, len(parts))
		for j, p := range parts {
			shard[j] = p.Shards()[i]
		}
		l, g := lossAndGrads(t, exec, paths, shard)
		losses, grads, counts = append(losses, l), append(grads, g), append(counts, count(shard))
	}
	gotLoss, gotGrads := combineShards(losses, grads, counts)
	wantLoss, wantGrads := lossAndGrads(t, exec, paths, batch)
	label := fmt.Sprintf("%s, N=%d", name, n)
	wbtest.RequireClose(t, label+": loss", []float64{wantLoss}, []float64{gotLoss}, 1e-12)
	if len(wantGrads) == 0 || len(gotGrads) != len(wantGrads) {
		t.Fatalf("%s: %d combined gradients, want %d", label, len(gotGrads), len(wantGrads))
	}
	for p, want := range wantGrads {
		wbtest.RequireClose(t, label+": d loss/d "+p, want, gotGrads[p], 1e-12)
	}
	if unequalMatters {
		plain := 0.0
		for _, l := range losses {
			plain += l / float64(n)
		}
		if math.Abs(plain-wantLoss) < 1e-3 {
			t.Errorf("%s: the unweighted mean over shards %v is as close to the full loss %v as the weighted one; "+
				"the data do not test the weights", label, plain, wantLoss)
		}
	}
}
