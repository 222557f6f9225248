package data

import "math/bits"

// rng is a small splitmix64 generator. The data package owns its random stream (instead of math/rand) so that a
// seed gives the same corpus, split and batch order on every Go release.
type rng struct{ state uint64 }

// newRNG derives an independent stream from a seed and any number of stream ids (document index, epoch, ...).
func newRNG(seed uint64, streams ...uint64) *rng {
	r := &rng{state: seed}
	for _, s := range streams {
		r.state = mix64(r.state ^ mix64(s+0x632be59bd9b4e019))
	}
	return r
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	return mix64(r.state)
}

// intn returns a uniform integer in [0, n); n must be > 0. Lemire's multiply-shift with rejection (unbiased).
func (r *rng) intn(n int) int {
	un := uint64(n)
	hi, lo := bits.Mul64(r.uint64(), un)
	if lo < un {
		threshold := -un % un
		for lo < threshold {
			hi, lo = bits.Mul64(r.uint64(), un)
		}
	}
	return int(hi)
}

// float64 returns a uniform number in [0, 1).
func (r *rng) float64() float64 { return float64(r.uint64()>>11) / (1 << 53) }

// pick returns a uniformly chosen element of xs (non-empty).
func pick[T any](r *rng, xs []T) T { return xs[r.intn(len(xs))] }

// permutation returns a uniformly random permutation of 0..n-1 (Fisher–Yates).
func (r *rng) permutation(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}
