package icl

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/theory/prior"
	"github.com/protolab/protolab/workbench/run"
)

// Batch is a batch of regression contexts of spec §2 as flat row-major float32 slices.
type Batch struct {
	B, N, D int
	// Shared says that all contexts share one x_{1:N} (GenerateShared); X is then [1, N, D].
	Shared bool
	X      []float32 // [B, N, D], or [1, N, D] when Shared
	Y      []float32 // [B, N]
	Theta  []float32 // [B, D]
	Leaves []int     // [B]: the tree leaf σ of each context (nil for the Gaussian prior)
}

// Tensors returns x [B|1, N, D], y [B, N] and θ [B, D] as float32 tensors, the inputs of the loss.
func (b *Batch) Tensors() []*tensors.Tensor {
	bx := b.B
	if b.Shared {
		bx = 1
	}
	return []*tensors.Tensor{
		tensors.FromFlatDataAndDimensions(b.X, bx, b.N, b.D),
		tensors.FromFlatDataAndDimensions(b.Y, b.B, b.N),
		tensors.FromFlatDataAndDimensions(b.Theta, b.B, b.D),
	}
}

// Slice returns contexts lo…hi−1 of the batch, sharing its storage.
func (b *Batch) Slice(lo, hi int) *Batch {
	out := &Batch{B: hi - lo, N: b.N, D: b.D, Shared: b.Shared, X: b.X, Y: b.Y[lo*b.N : hi*b.N],
		Theta: b.Theta[lo*b.D : hi*b.D]}
	if !b.Shared {
		out.X = b.X[lo*b.N*b.D : hi*b.N*b.D]
	}
	if b.Leaves != nil {
		out.Leaves = b.Leaves[lo:hi]
	}
	return out
}

// shapesOf is the float32 shape with the given dimensions.
func shapesOf(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }

// newBatch allocates a batch.
func newBatch(B, N, D int) *Batch {
	return &Batch{B: B, N: N, D: D, X: make([]float32, B*N*D), Y: make([]float32, B*N), Theta: make([]float32, B*D)}
}

// fill writes context b of the batch: θ, and N tokens drawn from rng by eq. (2.1) of package prior.
func (b *Batch) fill(i int, theta []float64, tok *prior.Tokens) {
	for j, v := range theta {
		b.Theta[i*b.D+j] = float32(v)
	}
	for j, v := range tok.X {
		b.X[i*b.N*b.D+j] = float32(v)
	}
	for j, v := range tok.Y {
		b.Y[i*b.N+j] = float32(v)
	}
}

// sampleTheta draws θ of context i from p into theta: for a tree prior a uniform leaf σ, recorded in b.Leaves
// (allocated at the first context), and θ_σ.
func (b *Batch) sampleTheta(rng *rand.Rand, p prior.Prior, i int, theta []float64) {
	tree, isTree := p.(prior.Tree)
	if !isTree {
		p.Sample(rng, theta)
		return
	}
	if b.Leaves == nil {
		b.Leaves = make([]int, b.B)
	}
	b.Leaves[i] = tree.SampleLeaf(rng)
	tree.Theta(b.Leaves[i], theta)
}

// Generate draws B independent contexts from p (θ from the prior, then N tokens with label noise s), all from one
// stream of seed, so the same arguments give the same batch. For a tree prior the leaves are recorded.
func Generate(p prior.Prior, B, N int, s float64, seed uint64, stream string) *Batch {
	rng := run.RNG(seed, stream)
	D := p.Dim()
	out := newBatch(B, N, D)
	theta := make([]float64, D)
	var tok prior.Tokens
	for i := 0; i < B; i++ {
		out.sampleTheta(rng, p, i, theta)
		prior.SampleTokens(rng, theta, N, s, &tok)
		out.fill(i, theta, &tok)
	}
	return out
}

// GenerateShared is Generate with one x_{1:N} ~ N(0, I) drawn for the whole batch: every context has its own θ
// and label noise ξ, so each is distributed as in spec §2, but their tokens coincide. Model A's and B's key MLPs
// then run once per batch instead of once per context (linattn.ForwardA); the price is a gradient whose
// token-noise part is shared by the batch, so a step carries less information than one of independent contexts.
func GenerateShared(p prior.Prior, B, N int, s float64, seed uint64, stream string) *Batch {
	rng := run.RNG(seed, stream)
	D := p.Dim()
	out := &Batch{B: B, N: N, D: D, Shared: true, X: make([]float32, N*D), Y: make([]float32, B*N),
		Theta: make([]float32, B*D)}
	x := make([]float64, N*D)
	for i := range x {
		x[i] = rng.NormFloat64()
		out.X[i] = float32(x[i])
	}
	theta := make([]float64, D)
	for b := 0; b < B; b++ {
		out.sampleTheta(rng, p, b, theta)
		for j, v := range theta {
			out.Theta[b*D+j] = float32(v)
		}
		for n := 0; n < N; n++ {
			y := 0.0
			for j, v := range theta {
				y += v * x[n*D+j]
			}
			out.Y[b*N+n] = float32(y + s*rng.NormFloat64())
		}
	}
	return out
}

// Stream is an endless fit.Batches of fresh contexts (infinite task diversity, spec §2): batch number i is
// Generate(Prior, B, N, S, Seed, "train-<i>") (GenerateShared with Shared), so State and Restore need only the
// counter. The next batch is generated in the background while the caller trains on the current one.
type Stream struct {
	Prior prior.Prior
	B, N  int
	S     float64
	Seed  uint64
	// Shared draws one x_{1:N} per batch (GenerateShared).
	Shared bool
	next   int
	ahead  chan *Batch // batch number next, being generated; nil when nothing is in flight
}

func (s *Stream) generate(i int) *Batch {
	if s.Shared {
		return GenerateShared(s.Prior, s.B, s.N, s.S, s.Seed, fmt.Sprintf("train-%d", i))
	}
	return Generate(s.Prior, s.B, s.N, s.S, s.Seed, fmt.Sprintf("train-%d", i))
}

// Next implements fit.Batches: x [B, N, D] ([1, N, D] with Shared), y [B, N], θ [B, D].
func (s *Stream) Next() ([]*tensors.Tensor, error) {
	var b *Batch
	if s.ahead != nil {
		b = <-s.ahead
	} else {
		b = s.generate(s.next)
	}
	s.next++
	s.ahead = make(chan *Batch, 1)
	go func(ch chan *Batch, i int) { ch <- s.generate(i) }(s.ahead, s.next)
	return b.Tensors(), nil
}

// State implements fit.Batches.
func (s *Stream) State() ([]byte, error) { return json.Marshal(s.next) }

// Restore implements fit.Batches.
func (s *Stream) Restore(state []byte) error {
	if err := json.Unmarshal(state, &s.next); err != nil {
		return errors.Wrapf(err, "icl.Stream.Restore: state %q", state)
	}
	s.ahead = nil // the batch in flight (if any) is for another position; let it finish unread
	return nil
}

// PatchPairs draws the target–donor pairs of spec §7 for divergence level j (1 ≤ j ≤ K): pairs·2 contexts laid out
// as target batch and donor batch. Target leaf σ is uniform; the donor σ′ shares bits 1…j−1, flips bit j and draws
// bits j+1…K afresh. Both contexts of a pair use the same x_{1:N} and ξ, so only θ differs.
func PatchPairs(t prior.Tree, pairs, N int, s float64, j int, seed uint64) (target, donor *Batch) {
	rng := run.RNG(seed, fmt.Sprintf("patch-%d", j))
	D, K := t.Dim(), t.Depth
	target, donor = newBatch(pairs, N, D), newBatch(pairs, N, D)
	target.Leaves, donor.Leaves = make([]int, pairs), make([]int, pairs)
	th, td := make([]float64, D), make([]float64, D)
	x := make([]float64, N*D)
	xi := make([]float64, N)
	for i := 0; i < pairs; i++ {
		leaf := t.SampleLeaf(rng)
		// Bit k of a leaf is bit K−k of the integer (package prior's encoding): keep bits above j, flip j, redraw below.
		low := 1<<(K-j) - 1
		d := leaf ^ (1 << (K - j))
		d = d&^low | rng.IntN(low+1)
		target.Leaves[i], donor.Leaves[i] = leaf, d
		t.Theta(leaf, th)
		t.Theta(d, td)
		for k := range x {
			x[k] = rng.NormFloat64()
		}
		for k := range xi {
			xi[k] = rng.NormFloat64()
		}
		for _, c := range []struct {
			b     *Batch
			theta []float64
		}{{target, th}, {donor, td}} {
			tok := prior.Tokens{N: N, D: D, X: x, Y: make([]float64, N)}
			for n := 0; n < N; n++ {
				y := s * xi[n]
				for k := 0; k < D; k++ {
					y += c.theta[k] * x[n*D+k]
				}
				tok.Y[n] = y
			}
			c.b.fill(i, c.theta, &tok)
		}
	}
	return target, donor
}
