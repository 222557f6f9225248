package interp

import (
	"slices"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data/wordnet"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// Pair is one prompt and its perturbation.
type Pair struct {
	Kind      string `json:"kind"`
	Original  string `json:"original"`
	Perturbed string `json:"perturbed"`
	Word      string `json:"word"` // the word that was changed
}

// RobustStats are the distribution comparisons of one model under one perturbation kind (spec §7.5).
type RobustStats struct {
	Kind     string `json:"kind"`
	Pairs    int    `json:"pairs"`
	JS       MeanSD `json:"js"`
	Overlap  MeanSD `json:"overlap"`
	Spearman MeanSD `json:"spearman"`
	Top1     MeanSD `json:"top1"`
	// RoutingJS[l] and RoutingJSRead[l] are the JS divergences of the position-averaged π and ρ of layer l
	// (ProtoT only).
	RoutingJS     []MeanSD `json:"routing_js,omitempty"`
	RoutingJSRead []MeanSD `json:"routing_js_read,omitempty"`
}

// RobustModel is the robustness of one model.
type RobustModel struct {
	Mixer  string        `json:"mixer"`
	ByKind []RobustStats `json:"by_kind"`
}

// Robustness is the lexical-perturbation study of one corpus.
type Robustness struct {
	Kinds  []string      `json:"kinds"`
	Models []RobustModel `json:"models"` // ProtoT, then LLaMA
	// Examples holds the first pair of each kind.
	Examples []Pair `json:"examples"`
}

// Stats returns the statistics of a mixer and a kind, or nil.
func (r *Robustness) Stats(mixer, kind string) *RobustStats {
	for _, m := range r.Models {
		if m.Mixer != mixer {
			continue
		}
		for i := range m.ByKind {
			if m.ByKind[i].Kind == kind {
				return &m.ByKind[i]
			}
		}
	}
	return nil
}

// prompts returns up to n prompt texts from the validation documents of prep: for each document (in a seeded
// order) the longest prefix that ends just before the last word of a sentence (so that the model predicts a
// sentence's final word) and whose tokens, with the EOS in front, number at most limit. Sentences of fewer than
// three words are not cut.
func prompts(prep *lmdata.Prepared, n, limit int, seed uint64) []string {
	val := prep.Val
	order := run.RNG(seed, "interp/prompts").Perm(len(val.Texts))
	var out []string
	for _, d := range order {
		if len(out) == n {
			break
		}
		best := ""
		for _, s := range val.Labels[d].Sentences {
			words := letterWords(val.Texts[d][s.Start:s.End])
			if len(words) < 3 {
				continue
			}
			text := val.Texts[d][:int(s.Start)+words[len(words)-2].end]
			if 1+len(prep.Tokenizer.Encode(text)) > limit {
				break
			}
			best = text
		}
		if best != "" {
			out = append(out, best)
		}
	}
	return out
}

// robustness perturbs held-out prompts and compares both models' next-token distributions (and ProtoT's routing).
func robustness(models []*lm.Model, prep *lmdata.Prepared, cc CorpusConfig, cfg Config, db *wordnet.DB) (*Robustness,
	error) {
	rc := cfg.Robust
	kinds := slices.Clone(rc.Perturbations)
	var synonyms func(string) []string
	if cc.Synonyms && db != nil {
		kinds = append(kinds, PerturbSynonym)
		synonyms = db.Synonyms
	}
	texts := prompts(prep, rc.Prompts, rc.MaxTokens-4, cfg.Seed)
	if len(texts) == 0 {
		return nil, errors.Errorf("interp: no held-out prompt of %s fits robust.max_tokens=%d", cc.Source, rc.MaxTokens)
	}
	rng := run.RNG(cfg.Seed, "interp/perturb")
	res := &Robustness{Kinds: kinds}
	var pairs []Pair
	for _, kind := range kinds {
		first := true
		for _, t := range texts {
			pt, word, ok, err := Perturb(t, kind, rng, synonyms)
			if err != nil {
				return nil, err
			}
			if !ok || 1+len(prep.Tokenizer.Encode(pt)) > rc.MaxTokens {
				continue
			}
			p := Pair{Kind: kind, Original: t, Perturbed: pt, Word: word}
			pairs = append(pairs, p)
			if first {
				res.Examples = append(res.Examples, p)
				first = false
			}
		}
	}
	// Rows: original and perturbed prompt of every pair, EOS-prefixed and right-padded with EOS (causal models:
	// padding after the last position changes nothing before it).
	var rows [][]int32
	var lens []int
	for _, p := range pairs {
		for _, t := range []string{p.Original, p.Perturbed} {
			ids := append([]int32{prep.EOS}, prep.Tokenizer.Encode(t)...)
			lens = append(lens, len(ids))
			for len(ids) < rc.MaxTokens {
				ids = append(ids, prep.EOS)
			}
			rows = append(rows, ids)
		}
	}
	for _, m := range models {
		rm, err := robustModel(m, rows, lens, pairs, kinds, cfg)
		if err != nil {
			return nil, err
		}
		res.Models = append(res.Models, rm)
	}
	return res, nil
}

// robustModel runs one model on the prompt rows and aggregates the comparisons per kind.
func robustModel(m *lm.Model, rows [][]int32, lens []int, pairs []Pair, kinds []string, cfg Config) (RobustModel,
	error) {
	mc := m.Config.Model
	isProto := mc.Mixer == decoder.MixerProtoT
	var names []string
	if isProto {
		names = append(probeNames(mc.NumLayers, protot.Scope+"."+protot.ProbePi),
			probeNames(mc.NumLayers, protot.Scope+"."+protot.ProbeRho)...)
	}
	keep := names
	if len(keep) == 0 {
		keep = []string{decoder.ProbeFinalNorm} // the output is all we need; keep one cheap probe
	}
	runner, err := newRunner(m, keep)
	if err != nil {
		return RobustModel{}, err
	}
	P := len(rows[0])
	B := min(cfg.Eval.BatchSize, len(rows))
	dists := make([][]float64, len(rows))     // next-token distribution at each row's last position
	routing := make([][][]float64, len(rows)) // [row][probe] position-averaged routing
	for from := 0; from < len(rows); from += B {
		to := min(from+B, len(rows))
		batch := make([][]int32, B)
		for i := range batch {
			batch[i] = rows[min(from+i, to-1)]
		}
		c, err := runner.Run(tensors.FromValue(batch))
		if err != nil {
			return RobustModel{}, errors.WithMessage(err, "interp: robustness prompts")
		}
		logits, err := flat64(c.Output)
		if err != nil {
			return RobustModel{}, err
		}
		V := len(logits) / (B * P)
		for i := from; i < to; i++ {
			last := (i-from)*P + lens[i] - 1
			row := make([]float64, V)
			for v := range row {
				row[v] = logits[last*V+v]
			}
			dists[i] = stats.Softmax(row)
		}
		for _, name := range names {
			vals, dims, err := c.Float64(name)
			if err != nil {
				return RobustModel{}, err
			}
			R := dims[len(dims)-1]
			for i := from; i < to; i++ {
				avg := make([]float64, R)
				for t := range lens[i] {
					for k := range R {
						avg[k] += vals[((i-from)*P+t)*R+k] / float64(lens[i])
					}
				}
				routing[i] = append(routing[i], avg)
			}
		}
	}
	rm := RobustModel{Mixer: mc.Mixer}
	k := cfg.Robust.TopK
	L := len(names) / 2
	for _, kind := range kinds {
		var js, ov, sp, t1 []float64
		rjs := make([][]float64, len(names))
		for i, p := range pairs {
			if p.Kind != kind {
				continue
			}
			a, b := dists[2*i], dists[2*i+1]
			js = append(js, stats.JensenShannon(a, b))
			ov = append(ov, TopKOverlap(a, b, k))
			sp = append(sp, SpearmanTopK(a, b, k))
			agree := 0.0
			if Top1Agree(a, b) {
				agree = 1
			}
			t1 = append(t1, agree)
			for j := range names {
				rjs[j] = append(rjs[j], stats.JensenShannon(routing[2*i][j], routing[2*i+1][j]))
			}
		}
		st := RobustStats{Kind: kind, Pairs: len(js), JS: NewMeanSD(js), Overlap: NewMeanSD(ov),
			Spearman: NewMeanSD(sp), Top1: NewMeanSD(t1)}
		for j := range names {
			if j < L {
				st.RoutingJS = append(st.RoutingJS, NewMeanSD(rjs[j]))
			} else {
				st.RoutingJSRead = append(st.RoutingJSRead, NewMeanSD(rjs[j]))
			}
		}
		rm.ByKind = append(rm.ByKind, st)
	}
	return rm, nil
}
