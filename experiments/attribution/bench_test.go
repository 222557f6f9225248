package attribution

import (
	"os"
	"testing"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// BenchmarkAttributionQuery times one query of each method on the Tiny model (all 800 training sequences), or on
// the preset named by $PROTOLAB_ATTR_BENCH_PRESET with the run folder $PROTOLAB_ATTR_BENCH_OUT (so that a trained
// Small model is reused). EK-FAC and the gradient-dot baselines recompute every training gradient per query (no
// stored gradients); fitting happens before the timer starts. The cache and factor sizes are reported as metrics.
//
//	GOMLX_BACKEND=go:parallelism=-1 go test -tags noxla -run '^$' -bench AttributionQuery ./experiments/attribution/
func BenchmarkAttributionQuery(b *testing.B) {
	preset := os.Getenv("PROTOLAB_ATTR_BENCH_PRESET")
	if preset == "" {
		preset = "tiny"
	}
	cfg, err := Preset(preset)
	if err != nil {
		b.Fatal(err)
	}
	ac := cfg.Attribution
	out := os.Getenv("PROTOLAB_ATTR_BENCH_OUT")
	if out == "" {
		out = b.TempDir()
	}
	m, err := lm.LoadOrTrain(cfg.Config, run.Out(out), run.Progress(nil))
	if err != nil {
		b.Fatalf("%+v", err)
	}
	at, err := NewAttributor(m, ac)
	if err != nil {
		b.Fatalf("%+v", err)
	}
	qs := at.validationQueries()
	type benchCase struct {
		name  string
		fit   func() error
		query func(q queryRow) error
		bytes func() int64
	}
	var cases []benchCase
	for _, name := range cachedMethods {
		cases = append(cases, benchCase{name, nil, func(q queryRow) error { _, err := at.cachedQuery(q, name); return err },
			func() int64 { return at.cachedBytes(name) }})
	}
	cases = append(cases, []benchCase{
		{MethodReference, at.fitReference, func(q queryRow) error { _, _, err := at.referenceQuery(q); return err },
			func() int64 { return at.ref.bytes + at.Curvature.Bytes() }},
		{MethodEKFAC + "_recompute", at.fitBlockEKFAC, func(q queryRow) error { _, err := at.timeBlockQuery(q); return err },
			func() int64 { return at.ekfac.f.Bytes() }},
		{MethodEKFACBank + "_recompute", at.fitBankEKFAC, func(q queryRow) error { _, err := at.timeBankQuery(q); return err },
			func() int64 { return at.bank.f.Bytes() }},
	}...)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.fit != nil {
				if err := c.fit(); err != nil {
					b.Fatalf("%+v", err)
				}
			}
			if err := c.query(qs[0]); err != nil { // warm-up: compiles the query graph
				b.Fatalf("%+v", err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := c.query(qs[i%len(qs)]); err != nil {
					b.Fatalf("%+v", err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(c.bytes()), "state-bytes")
		})
	}
}
