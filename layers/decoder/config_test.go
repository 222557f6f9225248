package decoder

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

func TestVariables_ScopesNamesAndCount(t *testing.T) {
	for _, tied := range []bool{false, true} {
		t.Run(fmt.Sprintf("tied=%v", tied), func(t *testing.T) {
			cfg := tinyConfigs()["untied H=3"]
			cfg.TieEmbeddings = tied
			vars, _, _ := newTinyModel(t, cfg, 100)
			V, D, F := cfg.VocabSize, cfg.Width, cfg.FFNWidth()
			want := []string{fmt.Sprintf("/embed/embeddings %v", []int{V, D})}
			for l := 0; l < cfg.NumLayers; l++ {
				b := fmt.Sprintf("/block_%02d", l)
				want = append(want,
					fmt.Sprintf("%s/attn_norm/gain %v", b, []int{D}),
					fmt.Sprintf("%s/attention/q %v", b, []int{D, D}),
					fmt.Sprintf("%s/attention/k %v", b, []int{D, D}),
					fmt.Sprintf("%s/attention/v %v", b, []int{D, D}),
					fmt.Sprintf("%s/attention/o %v", b, []int{D, D}),
					fmt.Sprintf("%s/ffn_norm/gain %v", b, []int{D}),
					fmt.Sprintf("%s/ffn/gate %v", b, []int{D, F}),
					fmt.Sprintf("%s/ffn/up %v", b, []int{D, F}),
					fmt.Sprintf("%s/ffn/down %v", b, []int{F, D}))
			}
			want = append(want, fmt.Sprintf("/final_norm/gain %v", []int{D}))
			if !tied {
				want = append(want, fmt.Sprintf("/lm_head/weights %v", []int{V, D}))
			}
			var got []string
			total := 0
			for v := range vars.IterVariables() {
				if v.Trainable {
					got = append(got, fmt.Sprintf("%s %v", v.Path(), v.Shape().Dimensions))
					total += v.Shape().Size()
					if v.Name() == VarGain && !strings.Contains(v.Scope(), "norm") {
						t.Errorf("gain %s is not under a *norm scope", v.Path())
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("variables:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if n := cfg.NumParams(); n != total {
				t.Fatalf("NumParams()=%d, created variables hold %d values", n, total)
			}
		})
	}
}

// TestInit_StandardDeviations checks the initialisation policy of doc.go for every mixer under both policies: each
// trainable variable of an untied decoder has its law (the policy's for every projection of the mixer, the FFN and
// the head; the layer's own for the rest), and no variable is missing from the table, so that a new projection
// cannot escape the policy. The widths give every checked weight at least 256 entries (doc of checkLaw).
func TestInit_StandardDeviations(t *testing.T) {
	for _, policy := range KnownInits {
		for _, mixer := range KnownMixers {
			t.Run(policy+"/"+mixer, func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.VocabSize, cfg.Width, cfg.NumLayers, cfg.TieEmbeddings = 64, 96, 2, false
				cfg.Init, cfg.InitStd, cfg.DType, cfg.MaxLen = policy, 0.05, "float64", 8
				cfg.Mixer = mixer
				cfg.ProtoT.NumPrototypes = 8
				vars := model.NewStore()
				vars.SetParam(model.ParamInitialSeed, int64(110))
				logitsExec(t, vars, cfg).MustExec(tensors.FromValue(randomTokens(111, 1, 3, cfg.VocabSize)))
				checked := 0
				for v := range vars.IterVariables() {
					if !v.Trainable {
						continue
					}
					l, ok := expectedLaw(cfg, v.Scope(), v.Name(), v.Shape().Dimensions)
					if !ok {
						t.Errorf("%s %v: not in the initialisation table of doc.go", v.Path(),
							v.Shape().Dimensions)
						continue
					}
					checkLaw(t, v.Path(), wbtest.Flat64(v.MustValue()), l)
					checked++
				}
				if checked == 0 {
					t.Fatal("no variable checked")
				}
			})
		}
	}
}

func TestConfig_Validate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate(): %v", err)
	}
	cases := []struct {
		edit func(c *Config)
		want string
	}{
		{func(c *Config) { c.VocabSize = 0 }, "vocab_size=0"},
		{func(c *Config) { c.Width = -4 }, "width=-4"},
		{func(c *Config) { c.NumLayers = 0 }, "num_layers=0"},
		{func(c *Config) { c.FFNHidden = -1 }, "ffn_hidden=-1"},
		{func(c *Config) { c.NormEpsilon = 0 }, "norm_epsilon=0"},
		{func(c *Config) { c.MaxLen = 0 }, "max_len=0"},
		{func(c *Config) { c.InitStd = math.NaN() }, "init_std=NaN"},
		{func(c *Config) { c.Init = "xavier" }, `init="xavier", want "pytorch"`},
		{func(c *Config) { c.Attention.InitStd = 0.05 }, "attention.init_std=0.05"},
		{func(c *Config) { c.Mixer, c.ProtoT.OutputInitStd = MixerProtoT, 0.1 }, "protot.output_init_std=0.1"},
		{func(c *Config) { c.Mixer, c.DeltaNet.InitStd = MixerDeltaNet, 0.1 }, "deltanet.init_std=0.1"},
		{func(c *Config) { c.Mixer, c.Mamba.OutputInitStd = MixerMamba, 0.1 }, "mamba.output_init_std=0.1"},
		{func(c *Config) { c.DType = "float16" }, `dtype="float16"`},
		{func(c *Config) { c.Mixer = "rnn" }, `mixer="rnn" (layer 0) is unknown; known mixers: attention, protot, deltanet, mamba`},
		{func(c *Config) { c.Attention.NumHeads = 3 }, "num_heads=3 does not divide width=256"},
		{func(c *Config) { c.Attention.NumKVHeads = 3 }, "num_kv_heads=3 does not divide num_heads=4"},
		{func(c *Config) { c.Attention.NumHeads = 0 }, "num_heads=0"},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		c.edit(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate() = %v, want an error containing %q", err, c.want)
		}
	}
}

func TestFFNWidth_LLaMARule(t *testing.T) {
	for _, c := range []struct{ D, want int }{{12, 32}, {128, 352}, {256, 704}, {96, 256}, {512, 1376}} {
		cfg := Config{Width: c.D}
		if got := cfg.FFNWidth(); got != c.want {
			t.Errorf("FFNWidth(D=%d)=%d, want %d (8D/3 rounded up to a multiple of 32)", c.D, got, c.want)
		}
	}
	if got := (Config{Width: 256, FFNHidden: 688}).FFNWidth(); got != 688 {
		t.Errorf("explicit ffn_hidden: FFNWidth()=%d, want 688", got)
	}
}

func TestFLOPsPerToken_Formula(t *testing.T) {
	cfg := DefaultConfig()
	cfg.VocabSize, cfg.Width, cfg.NumLayers = 2048, 128, 4
	const T = 256
	D, F, H, Dh, V, L := 128.0, 352.0, 4.0, 32.0, 2048.0, 4.0
	want := L*(2*D*3*H*Dh+2*H*Dh*D+4*T*H*Dh+3*2*D*F) + 2*D*V
	if got := FLOPsPerToken(cfg, T); got != want {
		t.Fatalf("FLOPsPerToken=%g, want %g", got, want)
	}
}
