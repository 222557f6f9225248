package mamba

import (
	"fmt"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/ml/model"

	"github.com/protolab/protolab/workbench/wbtest"
)

// D is the width of the initialisation test (wbtest.InitValues builds every mixer at it).
const D = wbtest.InitWidth

// With init_std 0 the projections are PyTorch's U(±1/√fan_in) (docs/spec/protot.md §2.4); with init_std and
// output_init_std set they are N(0, init_std²) and, for the projection into the residual stream, N(0,
// output_init_std²): the two policies of decoder.Config.Init.
func TestMixer_InitPolicy(t *testing.T) {
	for _, std := range []float64{0, 0.03} {
		cfg := DefaultConfig() // d_in = 2D
		cfg.InitStd = std
		if std > 0 {
			cfg.OutputInitStd = std / 2
		}
		vals := wbtest.InitValues(t, func(scope *model.Scope, x *Node) *Node { return Mixer(scope, cfg, x) })
		d := cfg.Inner(D)
		for name, fanIn := range map[string]int{VarIn: D, VarXProj: d, VarOut: d} {
			s := cfg.InitStd
			if name == VarOut {
				s = cfg.OutputInitStd
			}
			wbtest.CheckInitLaw(t, fmt.Sprintf("std=%g %s", std, name), vals[name], s, fanIn)
		}
		// dt_proj and the convolution keep mamba_simple's own initialisation under every std.
		wbtest.CheckInitLaw(t, fmt.Sprintf("std=%g %s", std, VarDTProj), vals[VarDTProj], 0, cfg.Rank(D))
		wbtest.CheckInitLaw(t, fmt.Sprintf("std=%g %s", std, VarConvKernel), vals[VarConvKernel], 0, cfg.ConvSize)
	}
}
