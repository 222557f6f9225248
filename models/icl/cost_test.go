package icl

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/linattn"
)

// TestStepFLOPs_ModelC is model C's count written out: keys 2·N·D·M per context (unshared), φ 2·N·M, readout
// 2·D·M.
func TestStepFLOPs_ModelC(t *testing.T) {
	mc := linattn.Config{Kind: linattn.KindC, Measurements: 3}
	N, D, B := 5, 7, 2
	require.Equal(t, float64(B*(2*N*D*3+2*N*3+2*D*3)), StepFLOPs(mc, D, N, B, false))
	require.Equal(t, float64(2*N*D*3+B*(2*N*3+2*D*3)), StepFLOPs(mc, D, N, B, true))
	for _, k := range []string{linattn.KindA, linattn.KindB, linattn.KindAPrime} {
		mc := linattn.Config{Kind: k, Measurements: 3, Hidden: 4}
		require.Less(t, StepFLOPs(mc, D, N, B, true), StepFLOPs(mc, D, N, B, false)+1e-9, k)
		require.Greater(t, StepFLOPs(mc, D, N, 2*B, false), StepFLOPs(mc, D, N, B, false), k)
	}
}
