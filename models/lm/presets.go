package lm

import (
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/lmdata"
)

// The PRISM studies (experiments/prismhead, attribution, steering, suppression) analyse one PRISM LM at each preset;
// its configuration lives here, once, so that they share the trained run. Each study embeds it in its own Config.

// PrismTiny is seconds on one CPU core: one-layer models of width 16, K = 16 prototypes with k = 4, 40 updates of
// 4×16 tokens at learning rate 0.01 (8 of them cross-entropy only).
func PrismTiny() Config {
	c := PrismSmall()
	Shape{Docs: 80, Vocab: 300, SeqLen: 16, Batch: 4, Width: 16, Layers: 1, MaxLen: 64}.Apply(&c.Data, &c.Model)
	c.Model.VocabSize = c.Data.Tokenizer.VocabSize
	c.Prism.NumPrototypes = 16
	c.Prism.TopK = 4
	c.Train.Steps = 40
	c.Train.LR = 1e-2
	c.Train.WarmupSteps = 2
	c.Train.EvalBatches = 1
	c.Prism.ProtoWarmup = 8
	c.Prism.SeedBatches = 1
	c.EvalBatches = 2
	return c
}

// PrismSmall is a few minutes on a 2-core CPU with the pure-Go backend: two-layer models of width 32 on the
// synthetic concept corpus, K = 256 = 8D prototypes with k = 8 (the low end of docs/spec/prism.md §12's 8D–16D
// range, and its k ablation), 400 updates of 8×32 tokens of which 100 are cross-entropy only,
// λ_rec = λ_1 = λ_2 = 0.1, the bank seeded from 4 batches and rescaled.
func PrismSmall() Config {
	d, m := Base(SmallShape)
	m.VocabSize = d.Tokenizer.VocabSize
	p := prism.DefaultConfig()
	p.NumPrototypes = 256
	p.TopK = 8
	t := fit.DefaultConfig()
	t.Steps = 400
	t.LR = 3e-3
	t.WarmupSteps = 20
	t.EvalEvery = 0 // the final perplexity is what the studies report
	t.EvalBatches = 4
	t.CheckpointEvery = 0
	return Config{Seed: 1, Data: d, Model: m, Head: HeadPrism, Train: t, EvalBatches: 16,
		Prism: Prism{Config: p, ProtoWarmup: 100, SeedBatches: 4, RescaleSeed: true}}
}

// PrismSmallV2 is the PRISM model of protocol v2 (docs/PROTOCOL.md, "prismhead, attribution, steering,
// suppression"), the prismhead study's Small models: PrismSmall's recipe (λ_rec = λ_1 = λ_2 = 0.1, k = 8, 100
// cross-entropy-only updates, the bank seeded from 4 batches) at D = 64 with 4 heads, L = 2, T = 64, B = 16,
// K = 8D = 512, a 1,024-token BPE and 10,000 synthetic documents, trained 500 updates. Sized with protolab cost and a
// short timing run so that the prismhead protocol on both of its corpora fits the Small budget (docs/DESIGN.md,
// "Presets"); PrismSmall stays the model of the Quick presets.
func PrismSmallV2() Config {
	c := PrismSmall()
	Shape{Docs: 10_000, Vocab: 1024, SeqLen: 64, Batch: 16, Width: 64, Layers: 2, Heads: 4}.Apply(&c.Data, &c.Model)
	c.Model.VocabSize = c.Data.Tokenizer.VocabSize
	c.Prism.NumPrototypes = 8 * c.Model.Width
	c.Train.Steps = 500
	return c
}

// PrismPaper is docs/spec/prism.md §12's small-scale plan: D = 256, L = 6, H = 4, T = 256, K = 4096, k = 16,
// CE + REC + R1 + R2 at 0.1 each with cosine distance, "split" routing, "autodiff" residual, a 200-step CE-only
// warm-up (§2.3). The spec's GPT-2 backbone details (LayerNorm, GELU, learned positions) are replaced by this
// workbench's LLaMA-style decoder, shared with the dense baseline. TinyStories is not bundled: point data.source at
// it (the default stays the synthetic corpus). Meant for a GPU with XLA.
func PrismPaper() Config {
	c := PrismSmall()
	c.Data.Synthetic.NumDocs = 200_000
	c.Data.Tokenizer.VocabSize = 16_384
	c.Data.SeqLen = 256
	c.Data.BatchSize = 32
	c.Model = decoder.DefaultConfig()
	c.Model.Attention.NumHeads = 4
	c.Model.VocabSize = c.Data.Tokenizer.VocabSize
	c.Prism.Config = prism.DefaultConfig()
	c.Train = fit.DefaultConfig()
	c.Train.Steps = 20_000
	c.Train.LR = 6e-4
	c.Train.WarmupSteps = 400
	c.Train.EvalEvery = 1000
	c.Train.CheckpointEvery = 1000
	c.Prism.ProtoWarmup = 200
	c.Prism.SeedBatches = 4
	c.EvalBatches = 0
	return c
}

// Shape is the size of a preset's corpus, batches and decoder: the handful of values in which the studies' presets
// differ. Apply writes every non-zero field and leaves a zero one as it is, so a Tiny preset reads as its Small one
// with the sizes it shrinks.
type Shape struct {
	Docs   int // data.synthetic.num_docs
	Vocab  int // data.tokenizer.vocab_size, and model.vocab_size when that is set (not left to the tokenizer)
	SeqLen int // data.seq_len
	Batch  int // data.batch_size
	Width  int // model.width
	Layers int // model.num_layers
	Heads  int // model.attention.num_heads
	MaxLen int // model.max_len
}

// Apply writes s's non-zero sizes into d and m. It leaves model.vocab_size alone: Vocab is the tokenizer's, and a
// preset sets the model's where it reads it (0 takes the tokenizer's at Config.Resolved).
func (s Shape) Apply(d *lmdata.Config, m *decoder.Config) {
	set := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	set(&d.Synthetic.NumDocs, s.Docs)
	set(&d.Tokenizer.VocabSize, s.Vocab)
	set(&d.SeqLen, s.SeqLen)
	set(&d.BatchSize, s.Batch)
	set(&m.Width, s.Width)
	set(&m.NumLayers, s.Layers)
	set(&m.Attention.NumHeads, s.Heads)
	set(&m.MaxLen, s.MaxLen)
}

// SmallShape is the size most Small presets start from: 2000 synthetic documents, a 1024-token BPE, batches of 8×32
// tokens, a two-layer decoder of width 32 with 2 heads and positions up to 128. Base applies it to the defaults.
var SmallShape = Shape{Docs: 2000, Vocab: 1024, SeqLen: 32, Batch: 8, Width: 32, Layers: 2, Heads: 2, MaxLen: 128}

// Base returns the default corpus and decoder configurations (lmdata.DefaultConfig, decoder.DefaultConfig, with
// RoPE base 10 000) at shape s. Like Apply it leaves model.vocab_size at the decoder's default.
func Base(s Shape) (lmdata.Config, decoder.Config) {
	d, m := lmdata.DefaultConfig(), decoder.DefaultConfig()
	m.Attention.RoPEBase = 10_000
	s.Apply(&d, &m)
	return d, m
}
