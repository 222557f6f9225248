package steering

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// The sparse linear controllers of doc.go (equations S1–S6), fitted in float64 on the frozen model's head outputs:
// over prototype slices (S1), over SAE feature slices (the same form with the SAE's codes and signatures), and the
// bias-only controller (S6).
// The log-sum-exps and softmax weights are written out rather than taken from workbench/stats: the loss needs
// log Σ exp (stats has no log-sum-exp) and the vocabulary expectations of (S4) use the unnormalised exponentials
// once, so the stats form would either repeat the pass or change the last bits.

// ctrlTok is one option token: the row of head outputs that predicts it, and the token.
type ctrlTok struct {
	row    int
	target int32
}

// ctrlItem is one multiple-choice item: per option its tokens, and the correct option.
type ctrlItem struct {
	options [][]ctrlTok
	correct int
}

// ctrlRow is the frozen model's head output at one position.
type ctrlRow struct {
	logits []float64 // [V] l_t
	protos []int     // [k] compact unit ids (indices into ctrlProblem.sig) of the active units (K_t, or SAE features)
	acts   []float64 // [k] their activations a_{t,i} (prototypes) or codes f_{t,j} (SAE features)
}

// ctrlProblem is the controller's data: the rows, the signatures of the units they use, and the items. With bias
// set it is the bias-only controller (S6): the gains are one per vocabulary token, added to every row's logits,
// and the rows' units and sig are ignored.
type ctrlProblem struct {
	rows   []ctrlRow
	sig    [][]float64 // [P][V] W p_i (or W d_j) of compact unit p
	bankID []int       // [P] bank (or dictionary) index of compact unit p
	items  []ctrlItem
	bias   bool
	vocab  int // V, for the bias-only controller
}

// units returns the number of gains: P, or V for the bias-only controller.
func (p *ctrlProblem) units() int {
	if p.bias {
		return p.vocab
	}
	return len(p.sig)
}

// ctrlEval holds the forward quantities of one evaluation.
type ctrlEval struct {
	loss   float64     // mean cross-entropy over the items (no L1 term)
	scores [][]float64 // [items][options] option scores (S2)
	grad   []float64   // [P] ∂loss/∂γ (nil unless asked)
}

// shifted returns l′_t (S1) of row r under gains gamma.
func (p *ctrlProblem) shifted(r int, gamma []float64, buf []float64) []float64 {
	row := &p.rows[r]
	buf = append(buf[:0], row.logits...)
	if p.bias {
		for v, g := range gamma {
			buf[v] += g
		}
		return buf
	}
	for j, c := range row.protos {
		if g := gamma[c] * row.acts[j]; g != 0 {
			for v, s := range p.sig[c] {
				buf[v] += g * s
			}
		}
	}
	return buf
}

// eval computes the loss, the option scores and (withGrad) the gradient of the items subset under gains gamma.
func (p *ctrlProblem) eval(gamma []float64, items []int, withGrad bool) ctrlEval {
	need := map[int]bool{}
	for _, i := range items {
		for _, opt := range p.items[i].options {
			for _, t := range opt {
				need[t.row] = true
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
		buf = p.shifted(r, gamma, buf)
		m := slices.Max(buf)
		sum := 0.0
		for v := range buf {
			buf[v] = math.Exp(buf[v] - m)
			sum += buf[v]
		}
		lse[r] = m + math.Log(sum)
		if withGrad && p.bias {
			prob := make([]float64, len(buf)) // softmax(l′_t)
			for v, e := range buf {
				prob[v] = e / sum
			}
			expect[r] = prob
		} else if withGrad {
			row := &p.rows[r]
			e := make([]float64, len(row.protos))
			for j, c := range row.protos {
				dot := 0.0
				for v, s := range p.sig[c] {
					dot += buf[v] * s
				}
				e[j] = dot / sum
			}
			expect[r] = e
		}
	}
	at := func(t ctrlTok) float64 { // l′_t[y_t]
		row := &p.rows[t.row]
		l := row.logits[t.target]
		if p.bias {
			return l + gamma[t.target]
		}
		for j, c := range row.protos {
			l += gamma[c] * row.acts[j] * p.sig[c][t.target]
		}
		return l
	}
	res := ctrlEval{scores: make([][]float64, len(items))}
	if withGrad {
		res.grad = make([]float64, p.units())
	}
	n := float64(len(items))
	for ii, i := range items {
		it := &p.items[i]
		sc := make([]float64, len(it.options))
		for o, opt := range it.options {
			for _, t := range opt {
				sc[o] += at(t) - lse[t.row]
			}
		}
		res.scores[ii] = sc
		m := slices.Max(sc)
		z := 0.0
		for _, s := range sc {
			z += math.Exp(s - m)
		}
		res.loss += (m + math.Log(z) - sc[it.correct]) / n
		if !withGrad {
			continue
		}
		for o, opt := range it.options {
			w := math.Exp(sc[o]-m) / z // softmax over options
			if o == it.correct {
				w--
			}
			w /= n
			for _, t := range opt {
				if p.bias { // ∂l′_t[y]/∂b_v − E_{softmax(l′_t)}[∂l′_t/∂b_v] = δ_{v,y} − softmax(l′_t)_v
					for v, q := range expect[t.row] {
						res.grad[v] -= w * q
					}
					res.grad[t.target] += w
					continue
				}
				row := &p.rows[t.row]
				for j, c := range row.protos {
					res.grad[c] += w * row.acts[j] * (p.sig[c][t.target] - expect[t.row][j])
				}
			}
		}
	}
	return res
}

// accuracy returns the fraction of items whose correct option has the highest score (ties count as wrong) and
// the per-item hits.
func (p *ctrlProblem) accuracy(gamma []float64, items []int) (float64, []bool) {
	if len(items) == 0 {
		return math.NaN(), nil
	}
	res := p.eval(gamma, items, false)
	hits := make([]bool, len(items))
	n := 0
	for ii, i := range items {
		sc := res.scores[ii]
		c := p.items[i].correct
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

// ctrlFit are the optimiser settings of one fit.
type ctrlFit struct {
	beta      float64
	steps     int
	lr        float64
	maxActive int
}

// fit minimises (S3) over the items subset from γ = 0 and returns γ over the compact prototypes.
func (p *ctrlProblem) fit(items []int, f ctrlFit) []float64 {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	P := p.units()
	gamma, m, v := make([]float64, P), make([]float64, P), make([]float64, P)
	for step := 1; step <= f.steps; step++ {
		g := p.eval(gamma, items, true).grad
		c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
		for i := range gamma {
			m[i] = b1*m[i] + (1-b1)*g[i]
			v[i] = b2*v[i] + (1-b2)*g[i]*g[i]
			den := math.Sqrt(v[i]/c2) + eps
			x := gamma[i] - f.lr*(m[i]/c1)/den
			gamma[i] = math.Copysign(math.Max(math.Abs(x)-f.lr*f.beta/den, 0), x) // prox of lr·β|γ| (metric den/lr)
		}
		if f.maxActive > 0 {
			keepTopK(gamma, f.maxActive)
		}
	}
	return gamma
}

// keepTopK zeroes every entry of x but the k largest in absolute value (ties: lower index kept).
func keepTopK(x []float64, k int) {
	nz := 0
	for _, v := range x {
		if v != 0 {
			nz++
		}
	}
	if nz <= k {
		return
	}
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(x[idx[a]]) > math.Abs(x[idx[b]]) })
	for _, i := range idx[k:] {
		x[i] = 0
	}
}

// selectBeta fits one controller per beta on the calibration items but a held-aside fraction `sel` (seeded), scores
// each on the held-aside items, and returns the index of the best beta (ties: the larger β, the sparser
// controller) with the held-aside accuracies.
func (p *ctrlProblem) selectBeta(calib []int, betas []float64, sel float64, seed uint64, f ctrlFit) (int, []float64) {
	order := slices.Clone(calib)
	rand.New(rand.NewPCG(seed, 0xbe7a)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	nSel := max(1, int(math.Round(sel*float64(len(order)))))
	if nSel >= len(order) {
		nSel = len(order) - 1
	}
	held, train := order[:nSel], order[nSel:]
	best, accs := 0, make([]float64, len(betas))
	for i, b := range betas {
		f.beta = b
		accs[i], _ = p.accuracy(p.fit(train, f), held)
		if accs[i] > accs[best] || (accs[i] == accs[best] && b > betas[best]) {
			best = i
		}
	}
	return best, accs
}
