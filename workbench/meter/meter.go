package meter

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Ratio returns a/b, or 0 when b is not positive (a quantity that was not measured).
func Ratio(a, b float64) float64 {
	if !(b > 0) {
		return 0
	}
	return a / b
}

// Load returns the 1-minute load average from /proc/loadavg, or 0 where it is unavailable.
func Load() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	if _, err := fmt.Sscan(string(b), &l); err != nil {
		return 0
	}
	return l
}

// Rates are the backend's speeds, each the best of three repetitions after one that compiles.
type Rates struct {
	MatMulGFLOPs          float64 `json:"matmul_gflops"`           // 512³ float32 products, wall clock
	MatMulGFLOPsPerCPUSec float64 `json:"matmul_gflops_per_cpu_s"` // the same per CPU-second
	ElementwiseGops       float64 `json:"elementwise_gops"`        // exp, multiply, add over 2²² values, wall clock
	// RoofGFLOPs is the backend's matmul roof: a 1024³ float32 product, wall clock, large enough for its kernels to
	// run at full rate on every core (a 512³ product does not on the pure-Go backend). A training step's share of it
	// says how close the step comes to what the backend's matrix products can do.
	RoofGFLOPs float64 `json:"roof_gflops"`
}

// RoofSize is n of the n×n by n×n product whose rate is Rates.RoofGFLOPs.
const RoofSize = 1024

// MeasureRates times a 512×512 and a RoofSize² float32 matrix product and an elementwise pass over 2²² values on
// backend.
func MeasureRates(backend compute.Backend) Rates {
	const n, e = 512, 1 << 22
	mm := MustNewExec(backend, func(x, y *Node) *Node { return MatMul(x, y) })
	x := tensors.FromShape(shapes.Make(dtypes.Float32, n, n))
	ew := MustNewExec(backend, func(x *Node) *Node { return Add(Mul(Exp(x), x), x) })
	v := tensors.FromShape(shapes.Make(dtypes.Float32, e))
	best := func(fn func()) (wall, cpu float64) {
		fn() // compile
		wall, cpu = math.Inf(1), math.Inf(1)
		for i := 0; i < 3; i++ {
			t0, c0 := time.Now(), CPUSeconds()
			fn()
			wall, cpu = min(wall, time.Since(t0).Seconds()), min(cpu, CPUSeconds()-c0)
		}
		return wall, cpu
	}
	var r Rates
	wall, cpu := best(func() { mm.MustExec(x, x)[0].FinalizeAll() })
	r.MatMulGFLOPs = 2 * n * n * n / wall / 1e9
	r.MatMulGFLOPsPerCPUSec = Ratio(2*n*n*n, cpu) / 1e9
	wall, _ = best(func() { ew.MustExec(v)[0].FinalizeAll() })
	r.ElementwiseGops = 3 * e / wall / 1e9
	big := tensors.FromShape(shapes.Make(dtypes.Float32, RoofSize, RoofSize))
	wall, _ = best(func() { mm.MustExec(big, big)[0].FinalizeAll() })
	r.RoofGFLOPs = 2 * RoofSize * RoofSize * RoofSize / wall / 1e9
	return r
}

// Memory samples the process's memory while a piece of work runs; StartMemory starts it and Stop ends it.
type Memory struct {
	done       chan struct{}
	wg         sync.WaitGroup
	base       float64
	resetHWM   bool
	peak, heap float64 // bytes
}

// StartMemory collects garbage, returns freed memory to the OS, records the resident set as the base, resets the
// kernel's high-water mark (where /proc/self/clear_refs allows it) and samples VmRSS and the Go heap every 5 ms.
func StartMemory() *Memory {
	runtime.GC()
	debug.FreeOSMemory()
	m := &Memory{done: make(chan struct{}), base: procStatus("VmRSS")}
	m.resetHWM = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			m.peak = max(m.peak, procStatus("VmRSS"))
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				m.heap = max(m.heap, float64(sample[0].Value.Uint64()))
			}
			select {
			case <-m.done:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// Stop ends the sampling and returns the peak resident set (the kernel's high-water mark where it could be reset,
// else the largest sample), the base resident set and the peak Go heap, in MB.
func (m *Memory) Stop() (peakMB, baseMB, heapMB float64) {
	close(m.done)
	m.wg.Wait()
	if m.resetHWM {
		m.peak = max(m.peak, procStatus("VmHWM"))
	}
	const mb = 1 << 20
	return m.peak / mb, m.base / mb, m.heap / mb
}

// procStatus returns a "kB" field of /proc/self/status in bytes, or 0 where it is unavailable.
func procStatus(field string) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

var (
	resolutionOnce sync.Once
	resolution     float64
)

// CPUResolution returns the resolution of CPUSeconds in seconds: the larger of what the clock declares and the
// step it is seen to advance by while this process spins (measured once, at most ~50 ms). Sandboxes and some
// kernels sample CPU time at the scheduler tick whatever the clock declares.
func CPUResolution() float64 {
	resolutionOnce.Do(func() {
		resolution = max(cpuClockResolution(), granularity(CPUSeconds, 50*time.Millisecond))
	})
	return resolution
}

// granularity spins, reading clock, and returns the median of five steps by which its value changes; when it
// changes fewer than five times within budget, it returns budget divided by the changes seen plus one.
func granularity(clock func() float64, budget time.Duration) float64 {
	var steps []float64
	start, prev := time.Now(), clock()
	for len(steps) < 5 && time.Since(start) < budget {
		if v := clock(); v != prev {
			steps = append(steps, v-prev)
			prev = v
		}
	}
	if len(steps) < 5 {
		return budget.Seconds() / float64(len(steps)+1)
	}
	slices.Sort(steps)
	return steps[2]
}

// CPUResolved reports whether a CPU time of d seconds is resolved to 10 %: at least ten times CPUResolution.
func CPUResolved(d float64) bool { return d > 0 && d >= 10*CPUResolution() }

// FormatResolved formats v, a quantity measured with resolution res (same unit), with three significant digits
// when v is at least ten resolutions; otherwise as "<b", the upper bound v + res, because the digits would be
// the timer's ticks (a few decoded tokens timed with a 10 ms clock read 0.000 or 3.333 ms each). A resolution
// ≤ 0 (unknown, e.g. a result stored before it was recorded) formats as "?".
func FormatResolved(v, res float64) string {
	switch {
	case !(res > 0):
		return "?"
	case v >= 1000 && v >= 10*res:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10*res:
		return strconv.FormatFloat(v, 'g', 3, 64)
	default:
		return "<" + strconv.FormatFloat(v+res, 'g', 2, 64)
	}
}
