package meanfield

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// Estimate is a Monte Carlo mean with its standard error (the sample standard deviation over √Samples).
type Estimate struct {
	// Mean is the sample mean of the per-context loss.
	Mean float64 `json:"mean"`
	// StdErr is the standard error of Mean.
	StdErr float64 `json:"std_err"`
	// Samples is the number of contexts averaged.
	Samples int `json:"samples"`
}

// sampler draws one context from rng and writes one loss value per output into out.
type sampler func(rng *rand.Rand, out []float64)

// mcBlock is the number of contexts drawn from one random stream. Blocks are the unit of parallel work, so results
// depend on the seed only, never on the number of goroutines.
const mcBlock = 256

// moments holds a running count, mean and sum of squared deviations (Chan et al.'s pairwise combination).
type moments struct {
	n        float64
	mean, m2 float64
}

// add folds one value in (Welford's update, stable for small losses with a large mean).
func (m *moments) add(x float64) {
	m.n++
	d := x - m.mean
	m.mean += d / m.n
	m.m2 += d * (x - m.mean)
}

// merge folds another block's moments in.
func (m *moments) merge(o moments) {
	if o.n == 0 {
		return
	}
	n := m.n + o.n
	d := o.mean - m.mean
	m.mean += d * o.n / n
	m.m2 += o.m2 + d*d*m.n*o.n/n
	m.n = n
}

// estimate converts the moments into an Estimate.
func (m moments) estimate() Estimate {
	e := Estimate{Mean: m.mean, Samples: int(m.n)}
	if m.n > 1 {
		e.StdErr = math.Sqrt(m.m2 / (m.n - 1) / m.n)
	}
	return e
}

// monteCarlo averages `outputs` per-context losses over `contexts` contexts. Block b draws from the PCG stream
// (seed, b); newSampler is called once per goroutine so that samplers may keep scratch space.
func monteCarlo(contexts int, seed uint64, outputs int, newSampler func() sampler) []Estimate {
	nb := (contexts + mcBlock - 1) / mcBlock
	blocks := make([][]moments, nb)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), nb); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			draw := newSampler()
			out := make([]float64, outputs)
			for b := range next {
				// The stream depends on (seed, block) only, so results do not depend on GOMAXPROCS.
				rng := rand.New(rand.NewPCG(seed, uint64(b)))
				acc := make([]moments, outputs)
				for i := b * mcBlock; i < min(contexts, (b+1)*mcBlock); i++ {
					draw(rng, out)
					for j, v := range out {
						acc[j].add(v)
					}
				}
				blocks[b] = acc
			}
		}()
	}
	for b := 0; b < nb; b++ {
		next <- b
	}
	close(next)
	wg.Wait()
	// Merge in block order: floating-point sums then do not depend on which goroutine finished first.
	total := make([]moments, outputs)
	for _, acc := range blocks {
		for j := range total {
			total[j].merge(acc[j])
		}
	}
	est := make([]Estimate, outputs)
	for j := range est {
		est[j] = total[j].estimate()
	}
	return est
}
