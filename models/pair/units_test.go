package pair

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/layers/sae"
	"github.com/protolab/protolab/models/dictionary"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/run"
)

var tinyTrained struct {
	once         sync.Once
	proto, llama *lm.Model
	prep         *lmdata.Prepared
	err          error
}

// tinyPair trains the Tiny pair on the synthetic corpus once per test binary (in memory, as the studies' Tiny
// presets train it) and returns it with its prepared data. Tests that intervene on the ProtoT model must leave it as
// they found it.
func tinyPair(t *testing.T) (proto, llama *lm.Model, prep *lmdata.Prepared) {
	t.Helper()
	tp := &tinyTrained
	tp.once.Do(func() {
		tp.proto, tp.llama, tp.err = Tiny().LoadOrTrain(lmdata.SourceSynthetic, run.Progress(nil))
		if tp.err == nil {
			tp.prep, tp.err = tp.proto.Data()
		}
	})
	require.NoError(t, tp.err)
	return tp.proto, tp.llama, tp.prep
}

// tinyText labels `sequences` sequences of the first (second false) or second half of the Tiny pair's validation
// split with the marked values of the synthetic corpus's four lexical concepts and "none", as experiments/interp's
// Tiny preset labels its texts; labels on fewer than minCount tokens are dropped.
func tinyText(t *testing.T, prep *lmdata.Prepared, second bool, sequences, minCount int) *naming.Text {
	t.Helper()
	src := naming.Source{Name: lmdata.SourceSynthetic, Packed: prep.ValSeqs, Corpus: prep.Val, Tok: prep.Tokenizer}
	lab := naming.Labelling{Kind: naming.LabelsMarked, Concepts: []string{"gender", "country", "topic", "number"},
		MinCount: minCount, None: true}
	n := prep.ValSeqs.NumSequences()
	from, to := 0, n/2
	if second {
		from, to = n/2, n
	}
	es, err := naming.LabelText(src, lab, from, to, sequences)
	require.NoError(t, err)
	return es
}

// TestScoreUnits_TinyPair scores every unit kind of the Tiny pair (with SAEs) on a labelled text that is also the
// selection text, and checks what the doc comments state:
//   - every kind of Kinds(), in order, with L·R prototypes by π and by ρ, L·H heads, NullUnits null units and at
//     most R selected (L·F unselected) SAE features per layer; each summary aggregates its own units;
//   - every Score in range and named exactly when purity ≥ MinPurity and p ≤ Alpha, its K the top-set size;
//   - each π, ρ and head unit has the score of the K tokens of largest π[t, k], ρ[t, k] or ‖z[t, h]‖₂ (one per
//     document), from activations computed here (naming.ScoreUnit, tested in its package, scores them);
//   - the dashboards agree with the units: Write/Read are the π/ρ scores, the top contexts hold the largest π of the
//     prototype in decreasing order, the purity is the share of top contexts carrying the label, the mass shares of
//     a layer sum to 1, MassByPos averages to the mass share; layer 0 reads with ρ = π (spec §5), so its ρ units
//     score as its π units and its read/write JS is 0;
//   - the returned named sets are the π units named on the selection text, and Coverage picks, per label and kind,
//     the named unit of highest purity.
func TestScoreUnits_TinyPair(t *testing.T) {
	proto, llama, prep := tinyPair(t)
	const K = 5
	es := tinyText(t, prep, true, 16, 3)
	train := make([][]int32, 16)
	for i := range train {
		train[i] = prep.TrainSeqs.Sequence(i)
	}
	sm := sae.DefaultConfig()
	sm.TargetL0 = 2
	st := fit.DefaultConfig()
	st.Steps, st.WarmupSteps, st.EvalEvery, st.EvalBatches, st.CheckpointEvery = 10, 2, 0, 1, 0
	cfg := UnitConfig{TokensPerUnit: K, OnePerDoc: true, Before: 4, After: 2,
		// Alpha = 1 names a unit on its purity alone: the Tiny pair, 20 steps trained, then has named units.
		Score: naming.ScoreParams{MinPurity: 0.4, Alpha: 1, ThemeExcess: 0.25}, NullUnits: 6, DeadMass: 1e-6,
		DashboardTokens: K, BatchSize: 8, Seed: 1,
		SAE: &SAEConfig{Config: dictionary.Config{Model: sm, Train: st, BatchSize: 64}}}
	ua, named, err := ScoreUnits(proto, llama, UnitTexts{Eval: es, Select: es, Train: train}, cfg)
	require.NoError(t, err)

	L, R, H := proto.Config.Model.NumLayers, proto.Config.Model.ProtoT.NumPrototypes,
		llama.Config.Model.Attention.NumHeads
	kinds := make([]string, len(ua.Kinds))
	for i, k := range ua.Kinds {
		kinds[i] = k.Kind
	}
	require.Equal(t, Kinds(), kinds)
	byKind := map[string][]Unit{}
	for i, u := range ua.Units {
		if i > 0 && u.Kind != ua.Units[i-1].Kind {
			require.NotContains(t, byKind, u.Kind, "units are grouped by kind")
		}
		byKind[u.Kind] = append(byKind[u.Kind], u)
	}
	require.Len(t, ua.SAE, L)
	F := ua.SAE[0].Features
	for _, kind := range Kinds() {
		units, s := byKind[kind], ua.Kind(kind)
		require.NotNil(t, s, kind)
		require.Len(t, units, s.Units, kind)
		switch kind {
		case KindProtoPi, KindProtoRho:
			require.Len(t, units, L*R)
		case KindHeads:
			require.Len(t, units, L*H)
		case KindNull:
			require.Len(t, units, cfg.NullUnits)
		case KindSAEAll:
			require.True(t, len(units) > 0 && len(units) <= L*F, "%s: %d units", kind, len(units))
		default:
			require.True(t, len(units) > 0 && len(units) <= L*R, "%s: %d units", kind, len(units))
		}
		cov, nNamed := 0.0, 0
		for _, u := range units {
			sc := u.Score
			if kind == KindNull {
				require.Equal(t, -1, u.Layer)
				require.Equal(t, fmt.Sprintf("null %d", u.Index), u.Name)
			} else {
				require.True(t, u.Layer >= 0 && u.Layer < L, u.Name)
				require.True(t, strings.HasPrefix(u.Name, fmt.Sprintf("L%d ", u.Layer)), u.Name)
				require.True(t, strings.HasSuffix(u.Name, fmt.Sprint(u.Index)), u.Name)
			}
			require.Equal(t, K, sc.K, u.Name)
			for _, x := range []float64{sc.Purity, sc.Excess, sc.Disentanglement, sc.PValue} {
				require.True(t, x >= 0 && x <= 1, "%s: %+v", u.Name, sc)
			}
			require.Equal(t, sc.Purity, sc.Coverage)
			require.Equal(t, sc.Label == "", sc.Purity == 0, "%s: %+v", u.Name, sc)
			require.Equal(t, sc.Purity >= cfg.Score.MinPurity && sc.PValue <= cfg.Score.Alpha, sc.Named, u.Name)
			require.LessOrEqual(t, sc.NumThemes, len(es.Tokens.Names))
			cov += sc.Coverage / float64(len(units))
			if sc.Named {
				nNamed++
			}
		}
		require.InDelta(t, cov, s.Coverage.Mean, 1e-12, kind)
		require.InDelta(t, float64(nNamed)/float64(len(units)), s.NamedFraction, 1e-12, kind)
	}
	for _, s := range ua.SAE {
		require.Equal(t, len(train)*es.T, s.TrainTokens)
		require.True(t, s.L0 >= 0 && !math.IsNaN(s.FVU), "%+v", s)
	}

	// Every π, ρ and head unit scores its own top set, from activations computed here.
	N, base := es.N(), es.Tokens.BaseRates()
	reference := func(acts []float64, width, f int) naming.Score {
		top := naming.TopTokens(naming.Column(acts, width, f), es.Tokens.Doc, K, cfg.OnePerDoc)
		return naming.ScoreUnit(top, es.Tokens, base, cfg.Score)
	}
	piNames := ProbeNames(L, protot.Scope+"."+protot.ProbePi)
	rhoNames := ProbeNames(L, protot.Scope+"."+protot.ProbeRho)
	zNames := ProbeNames(L, attention.Scope+"."+attention.ProbeZ)
	acts := probeText(t, proto, es, cfg.BatchSize, append(slices.Clone(piNames), rhoNames...))
	maps.Copy(acts, probeText(t, llama, es, cfg.BatchSize, zNames))
	for l := range L {
		z := acts[zNames[l]]
		Dh := len(z) / (N * H)
		norms := make([]float64, N*H)
		for i := range norms {
			norms[i] = math.Sqrt(floats.Dot(z[i*Dh:(i+1)*Dh], z[i*Dh:(i+1)*Dh]))
		}
		for h := range H {
			require.Equal(t, reference(norms, H, h), byKind[KindHeads][l*H+h].Score, "L%d H%d", l, h)
		}
	}
	pis, rhos := byKind[KindProtoPi], byKind[KindProtoRho]
	require.Len(t, ua.Prototypes, L*R)
	require.Len(t, ua.Layers, L)
	for l := range L {
		pi, rho := acts[piNames[l]], acts[rhoNames[l]]
		require.Len(t, pi, N*R)
		sum, maxShare, dead := 0.0, 0.0, 0.0
		for k := range R {
			i := l*R + k
			p := ua.Prototypes[i]
			require.Equal(t, ProtoName(l, k), p.Name)
			require.Equal(t, reference(pi, R, k), pis[i].Score, p.Name)
			require.Equal(t, reference(rho, R, k), rhos[i].Score, p.Name)
			require.Equal(t, pis[i].Score, p.Write)
			require.Equal(t, rhos[i].Score, p.Read)
			if l == 0 {
				require.Equal(t, p.Write, p.Read, "layer 0 reads with ρ = π")
			}
			require.Len(t, p.TopWrite, K)
			top, carry := math.Inf(-1), 0
			for n := range N {
				top = math.Max(top, pi[n*R+k])
			}
			require.InDelta(t, top, p.TopWrite[0].Activation, 1e-6, "%s: the top context has the largest π", p.Name)
			for j, ctx := range p.TopWrite {
				if j > 0 {
					require.LessOrEqual(t, ctx.Activation, p.TopWrite[j-1].Activation, p.Name)
				}
				if p.Write.Label != "" && slices.Contains(strings.Split(ctx.Labels, ","), p.Write.Label) {
					carry++
				}
			}
			require.InDelta(t, p.Write.Purity, float64(carry)/K, 1e-12, "%s: purity of %q", p.Name, p.Write.Label)
			mean := 0.0
			for _, x := range p.MassByPos {
				mean += x / float64(es.T)
			}
			require.InDelta(t, p.MassShare, mean, 1e-9, p.Name)
			sum += p.MassShare
			maxShare = math.Max(maxShare, p.MassShare)
			if p.Dead {
				dead++
			}
		}
		ls := ua.Layers[l]
		require.InDelta(t, 1, sum, 1e-4, "π rows are softmaxes")
		require.Equal(t, maxShare, ls.MaxShare)
		require.InDelta(t, dead/float64(R), ls.DeadFraction, 1e-12)
		require.True(t, ls.Top1Mean >= 1/float64(R)-1e-6 && ls.Top1Mean <= 1+1e-6, "%+v", ls)
		require.True(t, ls.ReadWriteJS >= 0 && ls.ReadWriteJS <= math.Ln2, "%+v", ls)
	}
	require.InDelta(t, 0, ua.Layers[0].ReadWriteJS, 1e-12, "layer 0 reads with ρ = π")

	// The named sets are the π units named on the selection text (here the evaluation text itself).
	want := map[string][][2]int{}
	for _, u := range pis {
		if u.Score.Named {
			want[u.Score.Label] = append(want[u.Score.Label], [2]int{u.Layer, u.Index})
		}
	}
	require.NotEmpty(t, want)
	require.Equal(t, want, named)

	// Coverage: every label but none; per kind the named unit of that label with the highest purity.
	require.Len(t, ua.Coverage, len(es.Concepts()))
	for _, lc := range ua.Coverage {
		require.NotEqual(t, naming.NoneLabel, lc.Label)
		for i, k := range ua.Kinds {
			best := 0.0
			for _, u := range byKind[k.Kind] {
				if u.Score.Named && u.Score.Label == lc.Label {
					best = math.Max(best, u.Score.Purity)
				}
			}
			require.Equal(t, best, lc.Purity[i], "%s, %s", lc.Label, k.Kind)
			require.Equal(t, best == 0, lc.Units[i] == "", "%s, %s", lc.Label, k.Kind)
		}
	}
}

// probeText runs m over the inputs of es in batches of B sequences (the last one padded with copies of its last row)
// and returns each named probe as a row-major [N, F] matrix over the N input tokens of es.
func probeText(t *testing.T, m *lm.Model, es *naming.Text, B int, names []string) map[string][]float64 {
	t.Helper()
	runner, err := Runner(m, names)
	require.NoError(t, err)
	out := map[string][]float64{}
	for from := 0; from < len(es.Seqs); from += B {
		rows := make([][]int32, B)
		for i := range rows {
			rows[i] = es.Seqs[min(from+i, len(es.Seqs)-1)][:es.T]
		}
		c, err := runner.Run(tensors.FromValue(rows))
		require.NoError(t, err)
		n := min(B, len(es.Seqs)-from) * es.T
		for _, name := range names {
			vals, dims, err := c.Float64(name)
			require.NoError(t, err)
			require.Equal(t, []int{B, es.T}, dims[:2], name)
			out[name] = append(out[name], vals[:n*len(vals)/(B*es.T)]...)
		}
	}
	return out
}
