package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/run"
)

// defaultCPURate is the sustained training rate of the pure-Go backend on this repository's 2-core CPU, in FLOP/s:
// BenchmarkForwardBackward of layers/decoder (d = 128, L = 4, T = 256, B = 8, float32; training FLOPs counted
// as 3 × FLOPsPerToken) measured 2.89 GFLOP per CPU-second, × 2 cores (`go test -tags noxla -run '^$' -bench
// ForwardBackward -benchtime 3x ./layers/decoder/`, 2026-12-02; BenchmarkMatMul alone: 4.65 GFLOP per
// CPU-second). The speed study's stored Small run agrees: 2,360 tokens/s × 1.82 MFLOP per training token for
// attention at T = 256 is 4.3 GFLOP/s on a loaded machine.
const defaultCPURate = 5.8e9

// notebooks names the notebook that calls each study (notebooks/*.ipynb; README.md's notebooks table).
var notebooks = map[string]string{
	"baseline": "00_quickstart", "architecture": "10_protot_architecture", "speed": "10_protot_architecture",
	"interp": "11_protot_interpretability", "robustness": "11_protot_interpretability", "prismhead": "20_prism",
	"attribution": "20_prism", "steering": "20_prism", "suppression": "20_prism", "fvec": "30_function_vectors",
}

// coster is what every study's configuration provides: its estimated compute (experiments/<study>/cost.go).
type coster interface{ Cost() run.Cost }

// studyCost returns the estimated cost of study s at preset.
func studyCost(s study, preset string) (run.Cost, error) {
	cfg, err := s.config(preset)
	if err != nil {
		return run.Cost{}, err
	}
	c, ok := cfg.(coster)
	if !ok {
		return run.Cost{}, errors.Errorf("cost: study %s has no Cost method", s.name)
	}
	return c.Cost(), nil
}

func cmdCost(args []string, stdout io.Writer) error {
	fs := newFlags("cost", "[--preset tiny|small|paper] [--rate FLOP/s] [--cpu-rate FLOP/s]", stdout)
	preset := fs.String("preset", "paper", "preset whose protocol to count: tiny, small or paper")
	rate := fs.Float64("rate", 100e12, "an assumed sustained training rate of an accelerator, in FLOP/s (not a "+
		"measurement)")
	cpuRate := fs.Float64("cpu-rate", defaultCPURate, "the sustained rate of the pure-Go backend on a 2-core CPU, "+
		"in FLOP/s (default: measured, see cost.go)")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if !(*rate > 0) || !(*cpuRate > 0) || math.IsInf(*rate, 0) || math.IsInf(*cpuRate, 0) {
		return errors.Errorf("cost: --rate=%g and --cpu-rate=%g must be finite and > 0", *rate, *cpuRate)
	}
	costs := make([]run.Cost, len(studies))
	for i, s := range studies {
		c, err := studyCost(s, *preset)
		if err != nil {
			return errors.WithMessagef(err, "cost: %s", s.name)
		}
		costs[i] = c
	}
	writeCostTable(stdout, *preset, costs, *rate, *cpuRate)
	return nil
}

// writeCostTable prints one row per study of the studies table, the total, then each study's notes.
func writeCostTable(w io.Writer, preset string, costs []run.Cost, rate, cpuRate float64) {
	fmt.Fprintf(w, "Estimated compute of every study at the %s preset, counted from its configuration "+
		"(experiments/<study>/cost.go), not measured.\n", preset)
	fmt.Fprintf(w, "FLOPs are matrix-product FLOPs (a multiply-add is 2); training = %d × forward; evaluation = the "+
		"main forward passes.\n", run.TrainPerForward)
	fmt.Fprintf(w, "Time columns: (train + eval) FLOPs at %s, an ASSUMED sustained rate (not a measurement), and "+
		"at %s, the pure-Go backend's training rate measured on a 2-core CPU.\n", flopRate(rate), flopRate(cpuRate))
	fmt.Fprintln(w, "Both times are lower bounds: elementwise work, data preparation and sampling are not counted, and "+
		"small models run below the rate (the Small protocols' stored runs took 2-6× the CPU column, steering 17×: "+
		"its SAEs and controllers are not counted).")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "study\tnotebook\truns\ttrain tokens\tparams (largest)\ttrain PFLOP\teval PFLOP\t@ %s\t@ %s\t\n",
		flopRate(rate), flopRate(cpuRate))
	var total run.Cost
	for i, s := range studies {
		c := costs[i]
		total = total.Add(run.Cost{Runs: c.Runs, TrainTokens: c.TrainTokens, Params: c.Params,
			TrainFLOPs: c.TrainFLOPs, EvalFLOPs: c.EvalFLOPs})
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.name, notebooks[s.name], c.Runs,
			count(float64(c.TrainTokens)), count(float64(c.Params)), pflop(c.TrainFLOPs), pflop(c.EvalFLOPs),
			duration(c.Seconds(rate)), duration(c.Seconds(cpuRate)))
	}
	fmt.Fprintf(tw, "total\t\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", total.Runs, count(float64(total.TrainTokens)),
		count(float64(total.Params)), pflop(total.TrainFLOPs), pflop(total.EvalFLOPs), duration(total.Seconds(rate)),
		duration(total.Seconds(cpuRate)))
	tw.Flush()
	fmt.Fprintln(w, "\nThe total counts a model two studies share (the model store trains it once) in each; "+
		"robustness's models are interp's first seed.")
	fmt.Fprintln(w, "\nnotes:")
	for i, s := range studies {
		fmt.Fprintf(w, "  %s: %s\n", s.name, costs[i].Notes)
	}
}

// pflop formats FLOPs in PFLOP with three significant digits.
func pflop(f float64) string { return fmt.Sprintf("%.3g", f/1e15) }

// flopRate formats a FLOP/s rate with an SI prefix ("100 TFLOP/s").
func flopRate(r float64) string { return si(r) + "FLOP/s" }

// count formats a count with an SI suffix ("1.31 G").
func count(x float64) string { return strings.TrimSpace(si(x)) }

// si formats x with three significant digits and an SI prefix followed by a space.
func si(x float64) string {
	for _, p := range []struct {
		v float64
		s string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= p.v {
			return fmt.Sprintf("%.3g %s", x/p.v, p.s)
		}
	}
	return fmt.Sprintf("%.3g ", x)
}

// duration formats seconds in the largest unit that keeps the number ≥ 1 (s, min, h, days, years).
func duration(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.2g s", s)
	case s < 3600:
		return fmt.Sprintf("%.3g min", s/60)
	case s < 86400:
		return fmt.Sprintf("%.3g h", s/3600)
	case s < 365*86400:
		return fmt.Sprintf("%.3g days", s/86400)
	}
	return fmt.Sprintf("%.3g years", s/(365*86400))
}
