package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/experiments/speed"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
	"github.com/protolab/protolab/workbench/store"
)

// storedCPURate returns the pure-Go backend's sustained training rate measured by the speed study's Small protocol
// stored under out (`protolab run speed --preset small`): the median over its training-throughput rows of the
// training FLOPs per token (theory/cost) × the measured tokens/s, with the result file and its machine; 0 and "" when
// none is stored.
func storedCPURate(out string) (rate float64, source string, err error) {
	cfg := speed.Small()
	res, ok, err := run.Stored[speed.Result](speed.Study, cfg, run.Out(out))
	if err != nil || !ok {
		return 0, "", err
	}
	var rates []float64
	for _, r := range res.Throughput {
		if r.Skipped == "" && r.TokensPerSec > 0 {
			rates = append(rates, r.TrainFLOPs*r.TokensPerSec)
		}
	}
	if len(rates) == 0 {
		return 0, "", nil
	}
	path, err := store.CachePath(run.StudyDir(out, speed.Study), run.ResultName, cfg)
	if err != nil {
		return 0, "", err
	}
	return stats.Median(rates), fmt.Sprintf("the median training rate of the %d rows of the speed protocol run %s "+
		"(backend %s, %d CPUs)", len(rates), run.ShowPath(path), res.Machine.Backend, res.Machine.NumCPU), nil
}

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
	cpuRate := fs.Float64("cpu-rate", 0, "a CPU's sustained training rate in FLOP/s for the second time column "+
		"(0: the rate measured by the speed study's stored Small protocol run under --out, if any)")
	out := fs.String("out", run.OutRoot(), "root folder of stored results, where the speed protocol run is looked for")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if !(*rate > 0) || !(*cpuRate >= 0) || math.IsInf(*rate, 0) || math.IsInf(*cpuRate, 0) {
		return errors.Errorf("cost: --rate=%g must be finite and > 0, --cpu-rate=%g finite and ≥ 0", *rate, *cpuRate)
	}
	cpuSource := "given by --cpu-rate"
	if *cpuRate == 0 {
		var err error
		if *cpuRate, cpuSource, err = storedCPURate(*out); err != nil {
			return errors.WithMessage(err, "cost: reading the stored speed protocol run")
		}
	}
	costs := make([]run.Cost, len(studies))
	for i, s := range studies {
		c, err := studyCost(s, *preset)
		if err != nil {
			return errors.WithMessagef(err, "cost: %s", s.name)
		}
		costs[i] = c
	}
	writeCostTable(stdout, *preset, costs, *rate, *cpuRate, cpuSource)
	return nil
}

// writeCostTable prints one row per study of the studies table, the total, then each study's notes. cpuRate 0 leaves
// out the CPU column; cpuSource says where a non-zero one comes from.
func writeCostTable(w io.Writer, preset string, costs []run.Cost, rate, cpuRate float64, cpuSource string) {
	fmt.Fprintf(w, "Estimated compute of every study at the %s preset, counted from its configuration "+
		"(experiments/<study>/cost.go), not measured.\n", preset)
	fmt.Fprintf(w, "FLOPs are matrix-product FLOPs (a multiply-add is 2); training = %d × forward; evaluation = the "+
		"main forward passes.\n", run.TrainPerForward)
	fmt.Fprintf(w, "Time: (train + eval) FLOPs at %s, an ASSUMED sustained rate (not a measurement)", flopRate(rate))
	if cpuRate > 0 {
		fmt.Fprintf(w, ", and at %s, %s", flopRate(cpuRate), cpuSource)
	}
	fmt.Fprintln(w, ".")
	if cpuRate == 0 {
		fmt.Fprintln(w, "No CPU column: no speed protocol run is stored under --out (`protolab run speed --preset small` "+
			"measures one) and --cpu-rate was not given.")
	}
	fmt.Fprintln(w, "Times are lower bounds: elementwise work, data preparation, sampling, SAEs and steering "+
		"controllers are not counted, and small models run below the rate.")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "study\tnotebook\truns\ttrain tokens\tparams (largest)\ttrain PFLOP\teval PFLOP\t@ " + flopRate(rate) + "\t"
	if cpuRate > 0 {
		head += "@ " + flopRate(cpuRate) + "\t"
	}
	fmt.Fprintln(tw, head)
	cpu := func(c run.Cost) string {
		if cpuRate == 0 {
			return ""
		}
		return duration(c.Seconds(cpuRate)) + "\t"
	}
	var total run.Cost
	for i, s := range studies {
		c := costs[i]
		total = total.Add(run.Cost{Runs: c.Runs, TrainTokens: c.TrainTokens, Params: c.Params,
			TrainFLOPs: c.TrainFLOPs, EvalFLOPs: c.EvalFLOPs})
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", s.name, notebooks[s.name], c.Runs,
			count(float64(c.TrainTokens)), count(float64(c.Params)), pflop(c.TrainFLOPs), pflop(c.EvalFLOPs),
			duration(c.Seconds(rate)), cpu(c))
	}
	fmt.Fprintf(tw, "total\t\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", total.Runs, count(float64(total.TrainTokens)),
		count(float64(total.Params)), pflop(total.TrainFLOPs), pflop(total.EvalFLOPs), duration(total.Seconds(rate)),
		cpu(total))
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
