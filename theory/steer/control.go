package steer

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// The log-sum-exps and softmax weights are written out: the loss needs log Σ exp and the vocabulary expectations of
// (S4) use the unnormalised exponentials once, so a separate softmax would either repeat the pass or change the last
// bits.

// Token is one option token: the row of head outputs that predicts it, and the token y_t.
type Token struct {
	Row    int
	Target int32
}

// Item is one multiple-choice item: per option its tokens, and the correct option.
type Item struct {
	Options [][]Token
	Correct int
}

// Row is the frozen model's head output at one position t.
type Row struct {
	Logits []float64 // [V] l_t
	Units  []int     // [k] compact unit ids (indices into Problem.Signatures) of the active units (K_t, or features)
	Acts   []float64 // [k] their activations a_{t,i} (prototypes) or codes f_{t,j} (SAE features)
}

// Problem is a controller's data: the rows, the signatures of the units they use, and the items. With Bias set it is
// the bias-only controller (S6): the gains are one per vocabulary token, added to every row's logits, and the rows'
// units and the signatures are ignored.
type Problem struct {
	Rows       []Row
	Signatures [][]float64 // [P][V] W p_i (or W d_j) of compact unit p
	IDs        []int       // [P] bank (or dictionary) index of compact unit p
	Items      []Item
	Bias       bool
	Vocab      int // V, for the bias-only controller
}

// Units returns the number of gains γ: P, or V for the bias-only controller.
func (p *Problem) Units() int {
	if p.Bias {
		return p.Vocab
	}
	return len(p.Signatures)
}

// Evaluation holds the forward quantities of one evaluation (Problem.Eval).
type Evaluation struct {
	Loss   float64     // mean cross-entropy over the items (S3 without the L1 term)
	Scores [][]float64 // [items][options] option scores (S2)
	Grad   []float64   // [Units] ∂Loss/∂γ (S4, S6); nil unless asked
}

// Shifted returns l′_t (S1, or S6 for the bias-only controller) of row r under gains gamma [Units], written into buf
// (reused when large enough): [V].
func (p *Problem) Shifted(r int, gamma []float64, buf []float64) []float64 {
	row := &p.Rows[r]
	buf = append(buf[:0], row.Logits...)
	if p.Bias {
		for v, g := range gamma {
			buf[v] += g
		}
		return buf
	}
	for j, c := range row.Units {
		if g := gamma[c] * row.Acts[j]; g != 0 {
			for v, s := range p.Signatures[c] {
				buf[v] += g * s
			}
		}
	}
	return buf
}

// Eval computes the loss (S3 without L1), the option scores (S2) and, withGrad, the gradient (S4; S6 for the
// bias-only controller) over the items subset (indices into Items) under gains gamma [Units].
func (p *Problem) Eval(gamma []float64, items []int, withGrad bool) Evaluation {
	need := map[int]bool{}
	for _, i := range items {
		for _, opt := range p.Items[i].Options {
			for _, t := range opt {
				need[t.Row] = true
			}
		}
	}
	rows := make([]int, 0, len(need))
	for r := range need {
		rows = append(rows, r)
	}
	sort.Ints(rows)
	// Per row: l′ at the targets (through logsumexp) and, for the gradient, E_{softmax(l′)}[W p_i] per active i.
	lse := make(map[int]float64, len(rows))
	expect := make(map[int][]float64, len(rows))
	var buf []float64
	for _, r := range rows {
		buf = p.Shifted(r, gamma, buf)
		m := slices.Max(buf)
		sum := 0.0
		for v := range buf {
			buf[v] = math.Exp(buf[v] - m)
			sum += buf[v]
		}
		lse[r] = m + math.Log(sum)
		if withGrad && p.Bias {
			prob := make([]float64, len(buf)) // softmax(l′_t)
			for v, e := range buf {
				prob[v] = e / sum
			}
			expect[r] = prob
		} else if withGrad {
			row := &p.Rows[r]
			e := make([]float64, len(row.Units))
			for j, c := range row.Units {
				dot := 0.0
				for v, s := range p.Signatures[c] {
					dot += buf[v] * s
				}
				e[j] = dot / sum
			}
			expect[r] = e
		}
	}
	at := func(t Token) float64 { // l′_t[y_t]
		row := &p.Rows[t.Row]
		l := row.Logits[t.Target]
		if p.Bias {
			return l + gamma[t.Target]
		}
		for j, c := range row.Units {
			l += gamma[c] * row.Acts[j] * p.Signatures[c][t.Target]
		}
		return l
	}
	res := Evaluation{Scores: make([][]float64, len(items))}
	if withGrad {
		res.Grad = make([]float64, p.Units())
	}
	n := float64(len(items))
	for ii, i := range items {
		it := &p.Items[i]
		sc := make([]float64, len(it.Options))
		for o, opt := range it.Options {
			for _, t := range opt {
				sc[o] += at(t) - lse[t.Row]
			}
		}
		res.Scores[ii] = sc
		m := slices.Max(sc)
		z := 0.0
		for _, s := range sc {
			z += math.Exp(s - m)
		}
		res.Loss += (m + math.Log(z) - sc[it.Correct]) / n
		if !withGrad {
			continue
		}
		for o, opt := range it.Options {
			w := math.Exp(sc[o]-m) / z // softmax over options
			if o == it.Correct {
				w--
			}
			w /= n
			for _, t := range opt {
				if p.Bias { // ∂l′_t[y]/∂b_v − E_{softmax(l′_t)}[∂l′_t/∂b_v] = δ_{v,y} − softmax(l′_t)_v
					for v, q := range expect[t.Row] {
						res.Grad[v] -= w * q
					}
					res.Grad[t.Target] += w
					continue
				}
				row := &p.Rows[t.Row]
				for j, c := range row.Units {
					res.Grad[c] += w * row.Acts[j] * (p.Signatures[c][t.Target] - expect[t.Row][j])
				}
			}
		}
	}
	return res
}

// Accuracy returns the fraction of the items subset whose correct option has the strictly highest score (S2) under
// gains gamma (ties count as wrong), and the per-item hits; NaN for no items.
func (p *Problem) Accuracy(gamma []float64, items []int) (float64, []bool) {
	if len(items) == 0 {
		return math.NaN(), nil
	}
	res := p.Eval(gamma, items, false)
	hits := make([]bool, len(items))
	n := 0
	for ii, i := range items {
		sc := res.Scores[ii]
		c := p.Items[i].Correct
		hits[ii] = true
		for o, s := range sc {
			if o != c && s >= sc[c] {
				hits[ii] = false
			}
		}
		if hits[ii] {
			n++
		}
	}
	return float64(n) / float64(len(items)), hits
}

// FitConfig are the optimiser settings of one fit (S5).
type FitConfig struct {
	Beta      float64 // β, the L1 weight; ≥ 0
	Steps     int     // full-batch Adam steps
	LR        float64 // Adam's learning rate
	MaxActive int     // keep only the MaxActive largest |γ_i| after each step; 0 means no cap
}

// Fit minimises (S3) over the items subset from γ = 0 by Adam (β₁ = 0.9, β₂ = 0.999) on the cross-entropy part and
// the L1 proximal step (S5), and returns γ [Units].
func (p *Problem) Fit(items []int, f FitConfig) []float64 {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	P := p.Units()
	gamma, m, v := make([]float64, P), make([]float64, P), make([]float64, P)
	for step := 1; step <= f.Steps; step++ {
		g := p.Eval(gamma, items, true).Grad
		c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
		for i := range gamma {
			m[i] = b1*m[i] + (1-b1)*g[i]
			v[i] = b2*v[i] + (1-b2)*g[i]*g[i]
			den := math.Sqrt(v[i]/c2) + eps
			x := gamma[i] - f.LR*(m[i]/c1)/den
			gamma[i] = math.Copysign(math.Max(math.Abs(x)-f.LR*f.Beta/den, 0), x) // prox of lr·β|γ| (metric den/lr)
		}
		if f.MaxActive > 0 {
			KeepLargest(gamma, f.MaxActive)
		}
	}
	return gamma
}

// KeepLargest zeroes every entry of x but the n largest in absolute value (ties: lower index kept), in place.
func KeepLargest(x []float64, n int) {
	nz := 0
	for _, v := range x {
		if v != 0 {
			nz++
		}
	}
	if nz <= n {
		return
	}
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(x[idx[a]]) > math.Abs(x[idx[b]]) })
	for _, i := range idx[n:] {
		x[i] = 0
	}
}

// SelectBeta fits one controller per β of betas (f's other settings) on the calibration items but a held-aside
// fraction sel (drawn with seed), scores each on the held-aside items, and returns the index of the best β (ties:
// the larger β, the sparser controller) with the held-aside accuracies.
func (p *Problem) SelectBeta(calib []int, betas []float64, sel float64, seed uint64, f FitConfig) (int, []float64) {
	order := slices.Clone(calib)
	rand.New(rand.NewPCG(seed, 0xbe7a)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	nSel := max(1, int(math.Round(sel*float64(len(order)))))
	if nSel >= len(order) {
		nSel = len(order) - 1
	}
	held, train := order[:nSel], order[nSel:]
	best, accs := 0, make([]float64, len(betas))
	for i, b := range betas {
		f.Beta = b
		accs[i], _ = p.Accuracy(p.Fit(train, f), held)
		if accs[i] > accs[best] || (accs[i] == accs[best] && b > betas[best]) {
			best = i
		}
	}
	return best, accs
}
