package decoder

import (
	"fmt"
	"testing"
)

// The helpers (benchTrainStep, benchDecode) are in mixer_deltanet_bench_test.go.

// BenchmarkMambaForwardBackward: default Mamba-1 (d_in = 256, N = 16, chunk ⌈√T⌉) at T = 256 (B = 8) and T = 1024
// (B = 2).
func BenchmarkMambaForwardBackward(b *testing.B) {
	for _, T := range []int{256, 1024} {
		b.Run(fmt.Sprintf("T=%d", T), func(b *testing.B) { benchTrainStep(b, MixerMamba, T) })
	}
}

// BenchmarkMambaDecode: one token at context 256 and 1024.
func BenchmarkMambaDecode(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("ctx=%d", n), func(b *testing.B) { benchDecode(b, MixerMamba, n) })
	}
}
