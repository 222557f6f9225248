package meanfield

import "math"

// SharedPrefix summarises a patching matrix delta[j−1][ℓ−1] = ΔMSE(j, ℓ) of eq. (7.1), a trained model's or
// PatchDelta's: the largest |ΔMSE(j, ℓ)| with a shared prefix (j ≥ ℓ ≥ 2; layer 1's keys depend on x alone) over the
// largest ΔMSE(j, ℓ) after the divergence (j < ℓ), capped at 1 (and 1 when neither moves: a model whose keys ignore
// the workspace shows no patching effect at all). The ideal model's is 0 (spec §7).
func SharedPrefix(delta [][]float64) float64 {
	var same, diff float64
	for j := range delta {
		for l := 1; l < len(delta[j]); l++ { // l is ℓ − 1; ℓ ≥ 2
			if d := delta[j][l]; j >= l {
				same = math.Max(same, math.Abs(d))
			} else {
				diff = math.Max(diff, d)
			}
		}
	}
	if diff <= 0 || same >= diff {
		return 1
	}
	return same / diff
}

// PatchDecay is the per-layer decay of the patching effect after the divergence in a matrix delta as for
// SharedPrefix: Σ ΔMSE(j, ℓ+1) / Σ ΔMSE(j, ℓ) over the cells j < ℓ < L (about α² per layer for the ideal model,
// spec §7); ok is false when the denominator is not positive (no effect to decay).
func PatchDecay(delta [][]float64) (v float64, ok bool) {
	var num, den float64
	for j := range delta {
		for l := 1; l+1 < len(delta[j]); l++ { // ℓ = l+1 ≥ 2, ℓ+1 ≤ L
			if j < l {
				num += delta[j][l+1]
				den += delta[j][l]
			}
		}
	}
	return num / den, den > 0
}
