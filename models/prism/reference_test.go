package prism

import (
	"math"
	"sort"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/protolab/protolab/layers/decoder"
	prismlayer "github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// The float64 oracles of the cached methods, written from docs/spec/prism.md §2.1, §5, §6.1 and §6.2 with plain
// loops. They read from the model only what defines it — the backbone's hidden states z_t, the bank P and the LM
// head W (decoder.PrismHead), and for option A the autodiff gradient of the cross-entropy with respect to the bank
// variable — and the Gumbel noise the attributor drew for the sampled labels (the same seeded random stream).
// Everything else — codes, output gradients, S, c_j, c^rec_j, n_j, C, C_rec, the damping, the curvature and its
// inverse, the scores — is recomputed here, sharing no code with the attributor's head pass, caches, statistics,
// preconditioners or solvers.

// float64Tiny trains the Tiny model in float64, so that the oracles can be compared at the caches' float32
// precision.
func float64Tiny(t *testing.T) *lm.Model {
	cfg := lm.PrismTiny()
	cfg.Model.DType = "float64"
	m, err := lm.LoadOrTrain(cfg, run.Out(t.TempDir()), run.Progress(nil))
	require.NoError(t, err)
	return m
}

// plainHead is the PRISM head of spec §2.1 for rows of T+1 tokens, token by token (token row·T + position).
type plainHead struct {
	K, D, V, k, T int
	P, W          [][]float64 // the bank [K][D] and the LM head [V][D]
	z             [][]float64 // [D] per token
	idx           [][]int     // the k selected prototypes, by decreasing cosine (ties to the lower index)
	act           [][]float64 // their activations ReLU(cos)
	nearest       []int       // argmax_j cos(z_t, p_j)
	logits        [][]float64 // l_t = W z_t [V]
	targets       []int
}

// newPlainHead runs the model's backbone on rows and rebuilds the head from z, P and W (equations 1–5 of
// layers/prism with the "cos" activation).
func newPlainHead(t *testing.T, m *lm.Model, rows [][]int32) *plainHead {
	mc, pc := m.Config.Model, m.Config.Prism.Config
	require.Equal(t, prismlayer.ScaleCos, pc.ActivationScale)
	exec, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, batch *Node) []*Node {
		in, _ := inputsAndTargets(batch)
		d := decoder.PrismHead(scope, mc, pc, in)
		return []*Node{ConvertDType(d.Hidden, dtypes.Float64), ConvertDType(d.Bank, dtypes.Float64),
			ConvertDType(d.Unembed, dtypes.Float64)}
	})
	require.NoError(t, err)
	T := len(rows[0]) - 1
	flat := make([]int32, 0, len(rows)*(T+1))
	for _, r := range rows {
		flat = append(flat, r...)
	}
	out, err := exec.Exec(tensors.FromFlatDataAndDimensions(flat, len(rows), T+1))
	require.NoError(t, err)
	zs, bank, unembed := tensors.MustCopyFlatData[float64](out[0]), tensors.MustCopyFlatData[float64](out[1]),
		tensors.MustCopyFlatData[float64](out[2])
	K, D, V, k := pc.NumPrototypes, mc.Width, mc.VocabSize, pc.TopK
	h := &plainHead{K: K, D: D, V: V, k: k, T: T}
	for j := 0; j < K; j++ {
		h.P = append(h.P, bank[j*D:(j+1)*D])
	}
	for v := 0; v < V; v++ {
		h.W = append(h.W, unembed[v*D:(v+1)*D])
	}
	for r, row := range rows {
		for pos := 0; pos < T; pos++ {
			z := zs[(r*T+pos)*D : (r*T+pos+1)*D]
			cos := make([]float64, K)
			for j := range cos {
				cos[j] = dot(z, h.P[j]) / (math.Sqrt(dot(z, z))*math.Sqrt(dot(h.P[j], h.P[j])) + prismlayer.Eps)
			}
			order := make([]int, K)
			for j := range order {
				order[j] = j
			}
			sort.SliceStable(order, func(a, b int) bool { return cos[order[a]] > cos[order[b]] })
			act := make([]float64, k)
			for i := range act {
				act[i] = math.Max(0, cos[order[i]])
			}
			l := make([]float64, V)
			for v := range l {
				l[v] = dot(h.W[v], z)
			}
			h.z, h.idx, h.act = append(h.z, z), append(h.idx, order[:k]), append(h.act, act)
			h.nearest, h.logits = append(h.nearest, order[0]), append(h.logits, l)
			h.targets = append(h.targets, int(row[pos+1]))
		}
	}
	return h
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

// outputGradient returns Wᵀ(softmax(l_t) − e_y) of token t for the label y (spec §5).
func (h *plainHead) outputGradient(t, y int) []float64 {
	l := h.logits[t]
	mx := math.Inf(-1)
	for _, v := range l {
		mx = math.Max(mx, v)
	}
	norm := 0.0
	for _, v := range l {
		norm += math.Exp(v - mx)
	}
	u := make([]float64, h.D)
	for v := range l {
		p := math.Exp(l[v]-mx) / norm
		if v == y {
			p--
		}
		for d := range u {
			u[d] += p * h.W[v][d]
		}
	}
	return u
}

// codeColumns returns the option-B gradient G = Σ_t w_t u_t a_tᵀ (codes held fixed, gold labels) of the tokens
// [lo, hi) with weights w (nil: 1), as K columns [D].
func (h *plainHead) codeColumns(lo, hi int, w []float64) [][]float64 {
	G := make([][]float64, h.K)
	for j := range G {
		G[j] = make([]float64, h.D)
	}
	for t := lo; t < hi; t++ {
		wt := 1.0
		if w != nil {
			wt = w[t-lo]
		}
		if wt == 0 {
			continue
		}
		u := h.outputGradient(t, h.targets[t])
		for i, j := range h.idx[t] {
			for d := range u {
				G[j][d] += wt * h.act[t][i] * u[d]
			}
		}
	}
	return G
}

// plainStats are the curvature statistics of spec §5 and §6.2 of a corpus.
type plainStats struct {
	K, D    int
	S       [][]float64 // (1/N_tok) Σ_t ũ_t ũ_tᵀ with sampled labels
	C, CRec [][]float64 // Σ_t a_t a_tᵀ and Σ_t a_t a_tᵀ/(‖z_t‖² + ε)
	n       []float64   // n_j
	delta   []float64   // δ_j = 2λ_1 + 2λ_2 n_j
	recW    float64     // λ_rec
	damping float64     // λ = scale·mean_{j,m}(c_j σ_m + e_j) = scale·(mean_j c_j · tr(S)/D + mean_j e_j)
	nTok    int
}

// newPlainStats counts the statistics of the corpus head h, whose rows the attributor passed in batches of batch
// rows with the sampled labels argmax(l + g), g its Gumbel noise of (seed, sampledLabelTag(first row of the batch)).
func newPlainStats(h *plainHead, pc prismlayer.Config, batch int, seed uint64, dampingScale float64) *plainStats {
	K, D, V, T := h.K, h.D, h.V, h.T
	st := &plainStats{K: K, D: D, S: square(D), C: square(K), CRec: square(K), n: make([]float64, K),
		delta: make([]float64, K), recW: pc.RecWeight, nTok: len(h.z)}
	var noise []float64
	for t := range h.z {
		row, pos := t/T, t%T
		first := row / batch * batch
		if row == first && pos == 0 {
			rng := run.RNG(seed, sampledLabelTag(first))
			noise = make([]float64, batch*T*V)
			for i := range noise {
				noise[i] = gumbelNoise(rng)
			}
		}
		g := noise[((row-first)*T+pos)*V:]
		y, best := 0, math.Inf(-1)
		for v := 0; v < V; v++ {
			if s := h.logits[t][v] + g[v]; s > best {
				y, best = v, s
			}
		}
		u := h.outputGradient(t, y)
		for a := 0; a < D; a++ {
			for b := 0; b < D; b++ {
				st.S[a][b] += u[a] * u[b] / float64(len(h.z))
			}
		}
		w := 1.0
		if pc.RecNorm {
			w = 1 / (dot(h.z[t], h.z[t]) + prismlayer.Eps)
		}
		for i, j := range h.idx[t] {
			for i2, j2 := range h.idx[t] {
				st.C[j][j2] += h.act[t][i] * h.act[t][i2]
				st.CRec[j][j2] += w * h.act[t][i] * h.act[t][i2]
			}
		}
		st.n[h.nearest[t]]++
	}
	trace, meanC, meanE := 0.0, 0.0, 0.0
	for d := 0; d < D; d++ {
		trace += st.S[d][d]
	}
	for j := 0; j < K; j++ {
		st.delta[j] = 2*pc.R1Weight + 2*pc.R2Weight*st.n[j]
		meanC += st.C[j][j] / float64(K)
		meanE += (2*st.recW*st.CRec[j][j] + st.delta[j]) / float64(K)
	}
	st.damping = dampingScale * (meanC*trace/float64(D) + meanE)
	return st
}

func square(n int) [][]float64 {
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
	}
	return m
}

// blockSolve returns (H_jj + λI)⁻¹ g = (c_j S + (2λ_rec c^rec_j + δ_j + λ) I)⁻¹ g by a dense solve.
func (st *plainStats) blockSolve(j int, g []float64) []float64 {
	D := st.D
	H := mat.NewDense(D, D, nil)
	for a := 0; a < D; a++ {
		for b := 0; b < D; b++ {
			v := st.C[j][j] * st.S[a][b]
			if a == b {
				v += 2*st.recW*st.CRec[j][j] + st.delta[j] + st.damping
			}
			H.Set(a, b, v)
		}
	}
	var x mat.VecDense
	if err := x.SolveVec(H, mat.NewVecDense(D, append([]float64(nil), g...))); err != nil {
		panic(err)
	}
	return x.RawVector().Data
}

// fullSolve returns (H + λI)⁻¹ vec(G), H = C ⊗ S + (2λ_rec C_rec + diag(δ)) ⊗ I (spec §5, §6.3), by a dense solve
// of the K·D system; G and the result are K columns [D].
func (st *plainStats) fullSolve(G [][]float64) [][]float64 {
	K, D := st.K, st.D
	H := mat.NewDense(K*D, K*D, nil)
	b := make([]float64, K*D)
	for i := 0; i < K; i++ {
		copy(b[i*D:(i+1)*D], G[i])
		for j := 0; j < K; j++ {
			E := 2 * st.recW * st.CRec[i][j]
			if i == j {
				E += st.delta[j] + st.damping
			}
			for d := 0; d < D; d++ {
				for e := 0; e < D; e++ {
					v := st.C[i][j] * st.S[d][e]
					if d == e {
						v += E
					}
					H.Set(i*D+d, j*D+e, v)
				}
			}
		}
	}
	var x mat.VecDense
	if err := x.SolveVec(H, mat.NewVecDense(K*D, b)); err != nil {
		panic(err)
	}
	out := make([][]float64, K)
	for j := range out {
		out[j] = x.RawVector().Data[j*D : (j+1)*D]
	}
	return out
}
