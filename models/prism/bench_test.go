package prism

import (
	"os"
	"testing"

	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/run"
)

// BenchmarkAttributionQuery times one query of each method with the default attributor on the Tiny PRISM model
// (lm.PrismTiny, all 800 training sequences), or on the lm preset named by $PROTOLAB_ATTR_BENCH_PRESET (tiny, small,
// paper) with the run folder $PROTOLAB_ATTR_BENCH_OUT (so that a trained Small model is reused). The EK-FAC baselines
// run at the memory of the default cached method: they store the training gradients that fit and recompute the others
// per query; fitting happens before the timer starts. The memory each method scores from is reported as a metric.
//
//	GOMLX_BACKEND=go:parallelism=-1 go test -tags noxla -run '^$' -bench AttributionQuery ./models/prism/
func BenchmarkAttributionQuery(b *testing.B) {
	preset := os.Getenv("PROTOLAB_ATTR_BENCH_PRESET")
	if preset == "" {
		preset = "tiny"
	}
	cfg, err := run.SelectPreset(preset, lm.PrismTiny, lm.PrismSmall, lm.PrismPaper)
	if err != nil {
		b.Fatal(err)
	}
	out := os.Getenv("PROTOLAB_ATTR_BENCH_OUT")
	if out == "" {
		out = b.TempDir()
	}
	m, err := lm.LoadOrTrain(cfg, run.Out(out), run.Progress(nil))
	if err != nil {
		b.Fatalf("%+v", err)
	}
	at, err := NewAttributor(m, DefaultAttributorConfig())
	if err != nil {
		b.Fatalf("%+v", err)
	}
	qs, err := at.ValidationQueries(0, 8, tinyPromptTokens) // the attribution study's Tiny queries
	if err != nil {
		b.Fatalf("%+v", err)
	}
	budget := at.Bytes()
	type benchCase struct {
		name  string
		fit   func() error
		query func(q Query) error
		bytes func() int64
	}
	var cases []benchCase
	for _, name := range CachedMethods {
		cases = append(cases, benchCase{name, nil,
			func(q Query) error { _, err := at.cachedQuery(q, name); return err },
			func() int64 { return at.cachedBytes(name) }})
	}
	cases = append(cases, []benchCase{
		{MethodReference, at.fitReference, func(q Query) error { _, err := at.referenceQuery(q); return err },
			func() int64 { return at.ref.bytes + at.Curvature.Bytes() }},
		{MethodEKFAC, func() error {
			if err := at.fitBlockEKFAC(); err != nil {
				return err
			}
			t := &at.ekfac.timing
			t.Stored = storedWithin(budget-at.ekfac.f.Bytes(), t.GradBytes, len(at.Corpus))
			_, _, _, err := at.blockScores(qs[:1])
			return err
		}, func(q Query) error { _, err := at.timeMatchedBlockQuery(q); return err },
			func() int64 { return at.ekfac.f.Bytes() + int64(at.ekfac.timing.Stored)*at.ekfac.timing.GradBytes }},
		{MethodEKFACBank, func() error {
			if err := at.fitBankEKFAC(); err != nil {
				return err
			}
			at.storeBankGradients(budget - at.bank.f.Bytes())
			return nil
		}, func(q Query) error { _, err := at.timeMatchedBankQuery(q); return err },
			func() int64 { return at.bank.f.Bytes() + at.bank.storedBytes }},
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
