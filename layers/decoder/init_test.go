package decoder

import (
	"math"
	"strings"
	"testing"

	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/mamba"
)

// law is the distribution a weight must have at initialisation.
type law struct {
	kind  string  // "uniform" U(±scale), "normal" N(0, scale²), "const" every entry = scale, "own" not checked here
	scale float64 // the bound, the standard deviation or the constant
}

// tailP is P(|Z| > √3) for a standard normal Z: the mass of N(0, s²) beyond the bound √3·s of the uniform law with the
// same variance, which the uniform law never exceeds.
var tailP = math.Erfc(math.Sqrt(3) / math.Sqrt2)

// checkLaw checks the sample vals against l. Tolerances are 4 standard errors of each statistic under l, from the
// closed forms: the mean (√(v/n)), the mean square (v·√((κ−1)/n), kurtosis κ = 9/5 for the uniform law and 3 for
// the normal one) and, for the normal law, the fraction beyond √3·s (binomial, √(p(1−p)/n)); the uniform law must
// also stay inside its bound. At n ≥ 256 the tail fraction alone tells the two laws apart (its tolerance is below
// tailP), so a uniform draw cannot pass for a normal one of the same variance, nor the reverse.
func checkLaw(t *testing.T, label string, vals []float64, l law) {
	t.Helper()
	n := float64(len(vals))
	switch l.kind {
	case "own":
		return
	case "const":
		for _, x := range vals {
			if x != l.scale {
				t.Errorf("%s: entry %g, want every entry %g", label, x, l.scale)
				return
			}
		}
		return
	}
	mean, ms, tail, maxAbs := 0.0, 0.0, 0.0, 0.0
	for _, x := range vals {
		mean += x / n
		ms += x * x / n
		maxAbs = max(maxAbs, math.Abs(x))
	}
	var v, kurt float64
	switch l.kind {
	case "uniform":
		v, kurt = l.scale*l.scale/3, 9.0/5
		if maxAbs > l.scale*(1+1e-12) {
			t.Errorf("%s: max |w| = %g beyond the bound %g of U(±%g)", label, maxAbs, l.scale, l.scale)
		}
	case "normal":
		v, kurt = l.scale*l.scale, 3
		for _, x := range vals {
			if math.Abs(x) > math.Sqrt(3)*l.scale {
				tail += 1 / n
			}
		}
		if tol := 4 * math.Sqrt(tailP*(1-tailP)/n); math.Abs(tail-tailP) > tol {
			t.Errorf("%s: fraction beyond √3·σ = %.4f, want %.4f ± %.4f for N(0, %g²)", label, tail, tailP, tol,
				l.scale)
		}
	default:
		t.Fatalf("%s: unknown law %q", label, l.kind)
	}
	if tol := 4 * math.Sqrt(v/n); math.Abs(mean) > tol {
		t.Errorf("%s: mean %g, want 0 ± %g", label, mean, tol)
	}
	if tol := 4 * v * math.Sqrt((kurt-1)/n); math.Abs(ms-v) > tol {
		t.Errorf("%s: mean square %g, want %g ± %g (%s, scale %g, n = %d)", label, ms, v, tol, l.kind, l.scale,
			len(vals))
	}
}

// expectedLaw is the initialisation doc.go ("Initialisation") gives the trainable variable name under scope of a
// decoder cfg, written from the table there and not from the code: proj(in, fanIn) is a projection that reads the
// residual stream, proj(out, fanIn) one that writes into it. ok is false for a variable the table does not list.
func expectedLaw(cfg Config, scope, name string, dims []int) (l law, ok bool) {
	sigma, residual := cfg.InitStd, cfg.InitStd/math.Sqrt(2*float64(cfg.NumLayers))
	proj := func(writes bool, fanIn int) law {
		if cfg.Init == InitGPT2 {
			if writes {
				return law{"normal", residual}
			}
			return law{"normal", sigma}
		}
		return law{"uniform", 1 / math.Sqrt(float64(fanIn))}
	}
	uniform := func(fanIn int) law { return law{"uniform", 1 / math.Sqrt(float64(fanIn))} }
	D, F := cfg.Width, cfg.FFNWidth()
	elem := scope[strings.LastIndex(scope, "/")+1:]
	switch elem + "/" + name {
	case "embed/embeddings":
		return law{"normal", sigma}, true
	case "attn_norm/gain", "ffn_norm/gain", "final_norm/gain":
		return law{"const", 1}, true
	case "ffn/gate", "ffn/up":
		return proj(false, D), true
	case "ffn/down":
		return proj(true, F), true
	case "lm_head/weights":
		return proj(false, D), true
	case "attention/q", "attention/k", "attention/v": // [D, ·]
		return proj(false, D), true
	case "attention/o": // [H·D_h, D]
		return proj(true, dims[0]), true
	case "protot/value", "protot/read_query": // W_V [D_v, D], W_r [D, D]: applied as W x
		return proj(false, D), true
	case "protot/output": // W_U [D, D_v]
		return proj(true, dims[1]), true
	case "protot/conv": // [D_v, 1, K]
		return uniform(dims[2]), true
	case "protot/prototypes", "protot/decay_logit", "protot/write_temp", "protot/read_temp", "protot/alpha":
		return law{"own", 0}, true // unit rows and constants: layers/protot's TestMixer_VariablesAndInit
	case "deltanet/q_proj", "deltanet/k_proj", "deltanet/v_proj", "deltanet/beta_proj":
		return proj(false, D), true
	case "deltanet/out_proj": // [H·d, D]
		return proj(true, dims[0]), true
	case "deltanet/q_conv", "deltanet/k_conv", "deltanet/v_conv": // [H·d, K]
		return uniform(dims[1]), true
	case "deltanet/out_norm":
		return law{"const", 1}, true
	case "mamba/in_proj":
		return proj(false, D), true
	case "mamba/x_proj", "mamba/out_proj": // [d_in, ·]
		return proj(name == "out_proj", dims[0]), true
	case "mamba/dt_proj": // [dt_rank, d_in]
		return uniform(dims[0]), true
	case "mamba/conv_kernel": // [d_in, K]
		return uniform(dims[1]), true
	case "mamba/conv_bias":
		return uniform(cfg.Mamba.ConvSize), true
	case "mamba/d_skip":
		return law{"const", 1}, true
	case "mamba/dt_bias", "mamba/a_log":
		return law{"own", 0}, true // layers/mamba's TestDTBiasInit_LogUniformWithFloor, TestMixer_VariablesAndInit
	}
	return law{}, false
}

// The empty policy is the default one, and the policy reaches every mixer's configuration as two numbers.
func TestProjectionStds_Policies(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NumLayers, cfg.InitStd = 8, 0.02
	for _, c := range []struct {
		init    string
		in, out float64
	}{{InitPyTorch, 0, 0}, {"", 0, 0}, {InitGPT2, 0.02, 0.02 / 4}} {
		cfg.Init = c.init
		if in, out := cfg.ProjectionStds(); in != c.in || out != c.out {
			t.Errorf("init=%q: ProjectionStds() = %g, %g, want %g, %g", c.init, in, out, c.in, c.out)
		}
		for _, mixer := range KnownMixers {
			cfg.Mixer = mixer
			mx, err := NewMixer(cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			var in, out float64
			switch m := mx.(type) {
			case attentionMixer:
				in, out = m.cfg.InitStd, m.cfg.OutputInitStd
			case protoTMixer:
				in, out = m.cfg.InitStd, m.cfg.OutputInitStd
			case recurrentMixer[deltanet.Config]:
				in, out = m.cfg.InitStd, m.cfg.OutputInitStd
			case recurrentMixer[mamba.Config]:
				in, out = m.cfg.InitStd, m.cfg.OutputInitStd
			default:
				t.Fatalf("%s: unexpected mixer type %T", mixer, mx)
			}
			if in != c.in || out != c.out {
				t.Errorf("init=%q %s: init_std=%g, output_init_std=%g, want %g, %g", c.init, mixer, in, out, c.in, c.out)
			}
		}
	}
}
