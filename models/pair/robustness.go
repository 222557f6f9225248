package pair

import (
	"math/rand/v2"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/host"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/naming"
	"github.com/protolab/protolab/workbench/stats"
	"github.com/protolab/protolab/workbench/tokenizer"
)

// PromptPair is one prompt and its perturbation.
type PromptPair struct {
	Kind      string `json:"kind"`
	Original  string `json:"original"`
	Perturbed string `json:"perturbed"`
	Word      string `json:"word"` // the word that was changed
}

// Stats are the distribution comparisons of one model under one perturbation kind (doc.go, "Robustness").
type Stats struct {
	Kind     string        `json:"kind"`
	Pairs    int           `json:"pairs"`
	JS       naming.MeanSD `json:"js"`
	Overlap  naming.MeanSD `json:"overlap"`
	Spearman naming.MeanSD `json:"spearman"`
	Top1     naming.MeanSD `json:"top1"`
	// RoutingJS[l] and RoutingJSRead[l] are the JS divergences of the position-averaged π and ρ of layer l
	// (ProtoT only).
	RoutingJS     []naming.MeanSD `json:"routing_js,omitempty"`
	RoutingJSRead []naming.MeanSD `json:"routing_js_read,omitempty"`
}

// ModelStats are the comparisons of one model, one Stats per perturbation kind (Robustness.Kinds order).
type ModelStats struct {
	Mixer  string  `json:"mixer"`
	ByKind []Stats `json:"by_kind"`
}

// Prompts returns up to n prompt texts from the validation documents of prep: for each document (in an order drawn
// from rng) the longest prefix that ends just before the last word of a sentence (so that the model predicts a
// sentence's final word) and whose tokens, with the EOS in front, number at most limit. Sentences of fewer than
// three words are not cut.
func Prompts(prep *lmdata.Prepared, n, limit int, rng *rand.Rand) []string {
	val := prep.Val
	order := rng.Perm(len(val.Texts))
	var out []string
	for _, d := range order {
		if len(out) == n {
			break
		}
		best := ""
		for _, s := range val.Labels[d].Sentences {
			words := data.LetterWords(val.Texts[d][s.Start:s.End])
			if len(words) < 3 {
				continue
			}
			text := val.Texts[d][:int(s.Start)+words[len(words)-2].End]
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

// SentencePrompts returns up to n prompt texts cut from the sentences of corpus c (its labels' Sentences), for a
// corpus of few long documents (the Brown corpus's evaluation splits), where Prompts would give one prompt per
// document: each sentence of at least three words gives the text from its start to just before its last word (so
// that the model predicts a sentence's final word), kept when its tokens, with the EOS in front, number at most
// limit. n of these are drawn with rng, in the order drawn (all of them when there are no more than n). A prompt
// need not start its document.
func SentencePrompts(c *data.Corpus, tok *tokenizer.Tokenizer, n, limit int, rng *rand.Rand) []string {
	var cands []string
	for d, text := range c.Texts {
		if d >= len(c.Labels) {
			break
		}
		for _, s := range c.Labels[d].Sentences {
			words := data.LetterWords(text[s.Start:s.End])
			if len(words) < 3 {
				continue
			}
			p := text[s.Start : int(s.Start)+words[len(words)-2].End]
			if 1+len(tok.Encode(p)) <= limit {
				cands = append(cands, p)
			}
		}
	}
	var out []string
	for _, i := range rng.Perm(len(cands)) {
		if len(out) == n {
			break
		}
		out = append(out, cands[i])
	}
	return out
}

// RobustnessConfig sets the sizes of MeasureRobustness.
type RobustnessConfig struct {
	MaxTokens int // a perturbed prompt's longest length in tokens, the EOS in front included; the rows' length
	OverlapK  int // k of the top-k overlap and of the Spearman union
	BatchSize int // prompt rows per forward pass
}

// Robustness is the robustness measurement of the pair on one corpus (docs/spec/protot.md §7.5; doc.go,
// "Robustness").
type Robustness struct {
	// Kinds are the perturbation kinds applied, in order.
	Kinds []string `json:"kinds"`
	// Comparisons are the statistics of each model (in the order given) under each kind.
	Comparisons []ModelStats `json:"comparisons"`
	// Examples holds the first pair of each kind.
	Examples []PromptPair `json:"examples"`
}

// MeasureRobustness perturbs each prompt text once per kind (data.Perturb with rng and synonyms, which
// data.PerturbSynonym needs), drops a perturbed prompt longer than cfg.MaxTokens, and compares each model's
// next-token distributions (and a ProtoT model's routing) on every original and perturbed prompt.
func MeasureRobustness(models []*lm.Model, prep *lmdata.Prepared, texts, kinds []string, cfg RobustnessConfig,
	rng *rand.Rand, synonyms func(string) []string) (*Robustness, error) {
	rb := &Robustness{Kinds: kinds}
	var pairs []PromptPair
	for _, kind := range kinds {
		first := true
		for _, t := range texts {
			pt, word, ok, err := data.Perturb(t, kind, rng, synonyms)
			if err != nil {
				return nil, err
			}
			if !ok || 1+len(prep.Tokenizer.Encode(pt)) > cfg.MaxTokens {
				continue
			}
			p := PromptPair{Kind: kind, Original: t, Perturbed: pt, Word: word}
			pairs = append(pairs, p)
			if first {
				rb.Examples = append(rb.Examples, p)
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
			for len(ids) < cfg.MaxTokens {
				ids = append(ids, prep.EOS)
			}
			rows = append(rows, ids)
		}
	}
	for _, m := range models {
		ms, err := compare(m, rows, lens, pairs, kinds, cfg)
		if err != nil {
			return nil, err
		}
		rb.Comparisons = append(rb.Comparisons, ms)
	}
	return rb, nil
}

// compare runs one model on the prompt rows (pair i: rows 2i and 2i+1, of lens tokens before the padding) and
// aggregates the comparisons per kind.
func compare(m *lm.Model, rows [][]int32, lens []int, pairs []PromptPair, kinds []string, cfg RobustnessConfig) (
	ModelStats, error) {
	mc := m.Config.Model
	isProto := mc.Mixer == decoder.MixerProtoT
	var names []string
	if isProto {
		names = append(ProbeNames(mc.NumLayers, protot.Scope+"."+protot.ProbePi),
			ProbeNames(mc.NumLayers, protot.Scope+"."+protot.ProbeRho)...)
	}
	keep := names
	if len(keep) == 0 {
		keep = []string{decoder.ProbeFinalNorm} // the output is all we need; keep one cheap probe
	}
	runner, err := Runner(m, keep)
	if err != nil {
		return ModelStats{}, err
	}
	P := len(rows[0])
	B := min(cfg.BatchSize, len(rows))
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
			return ModelStats{}, errors.WithMessage(err, "pair: prompts")
		}
		logits, err := host.Floats(c.Output)
		if err != nil {
			return ModelStats{}, err
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
				return ModelStats{}, err
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
	ms := ModelStats{Mixer: mc.Mixer}
	k := cfg.OverlapK
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
			ov = append(ov, naming.TopKOverlap(a, b, k))
			sp = append(sp, naming.SpearmanTopK(a, b, k))
			agree := 0.0
			if naming.Top1Agree(a, b) {
				agree = 1
			}
			t1 = append(t1, agree)
			for j := range names {
				rjs[j] = append(rjs[j], stats.JensenShannon(routing[2*i][j], routing[2*i+1][j]))
			}
		}
		st := Stats{Kind: kind, Pairs: len(js), JS: naming.NewMeanSD(js), Overlap: naming.NewMeanSD(ov),
			Spearman: naming.NewMeanSD(sp), Top1: naming.NewMeanSD(t1)}
		for j := range names {
			if j < L {
				st.RoutingJS = append(st.RoutingJS, naming.NewMeanSD(rjs[j]))
			} else {
				st.RoutingJSRead = append(st.RoutingJSRead, naming.NewMeanSD(rjs[j]))
			}
		}
		ms.ByKind = append(ms.ByKind, st)
	}
	return ms, nil
}
