package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/experiments/attribution"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/prism"
	"github.com/protolab/protolab/workbench/run"
)

const attributeSynopsis = `--query "prompt|completion" [--method prism|ekfac|graddot|...] [--top 10] ` +
	`[--preset tiny|small|paper] [--set "key=value;..."]... [--out DIR] | --compare`

// cmdAttribute ranks the training sequences of the attribution study's PRISM model (trained or loaded under --out) for
// a query text with one attribution method of models/prism, or (--compare) loads or runs the attribution study and
// prints its table. The study supplies the presets and keys of both. A query longer than the model's window
// (data.seq_len + 1 tokens) is cut to its last tokens, and the output says so first.
func cmdAttribute(args []string, stdout io.Writer) error {
	fs := newFlags("attribute", attributeSynopsis, stdout)
	query := fs.String("query", "", `text to attribute; with "|" only the completion after it is attributed; `+
		`at most data.seq_len+1 tokens are read (the last ones; the output says when a query is cut)`)
	method := fs.String("method", prism.MethodPrism, "method: "+strings.Join(prism.Methods, ", "))
	top := fs.Int("top", 10, "number of training sequences to print")
	preset := fs.String("preset", "small", "preset: tiny, small or paper")
	set := newSetFlag(fs, "prism.top_k=8;attribution.train_seqs=500", "protolab keys attribution")
	out := fs.String("out", run.OutRoot(), "root folder of stored models and results (the model and its "+
		"attribution cache are kept there)")
	compare := fs.Bool("compare", false, "load or run the attribution study (every method on the validation "+
		"queries) and print its comparison table")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if (*query == "") == !*compare {
		fs.Usage()
		return errors.New("attribute: give --query TEXT or --compare")
	}
	if *compare {
		var queryOnly []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "method" || f.Name == "top" {
				queryOnly = append(queryOnly, "--"+f.Name)
			}
		})
		if len(queryOnly) > 0 {
			verb := "applies"
			if len(queryOnly) > 1 {
				verb = "apply"
			}
			return errors.Errorf("attribute: %s %s to --query; --compare runs every method on the validation "+
				"queries", strings.Join(queryOnly, " and "), verb)
		}
	}
	if *top < 1 {
		return errors.Errorf("attribute: --top=%d, want ≥ 1", *top)
	}
	if !slices.Contains(prism.Methods, *method) {
		return errors.Errorf("attribute: unknown method %q; want one of %s", *method,
			strings.Join(prism.Methods, ", "))
	}
	cfg, err := attribution.Preset(*preset)
	if err != nil {
		return err
	}
	if err := run.Override(&cfg, set.String()); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil { // before training anything
		return err
	}
	scope, stop := interruptContext()
	defer stop()
	opts := []run.Option{run.Out(*out), run.Overrides(set.String()), run.Context(scope)}
	if *compare {
		res, err := attribution.Runs.LoadOrRun(cfg, opts...)
		if err != nil {
			return err
		}
		return attribution.WriteTable(stdout, res)
	}
	m, err := lm.LoadOrTrain(cfg.Config, opts...)
	if err != nil {
		return err
	}
	at, err := prism.NewAttributor(m, cfg.Attribution.AttributorConfig)
	if err != nil {
		return err
	}
	if n, window := at.QueryLength(*query); n > window {
		fmt.Fprintf(stdout, "note: the query has %d tokens, more than the model reads (data.seq_len+1 = %d): only "+
			"its last %d tokens are read, the first %d are dropped\n", n, window, window, n-window)
	}
	hits, err := at.Query(*query, *method, *top)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "query %q, method %s, %d training sequences (scores: influence / %d tokens; positive = "+
		"helpful)\n", *query, *method, len(at.Corpus), at.NumTokens)
	for i, h := range hits {
		fmt.Fprintf(stdout, "%3d. seq %-6d %+.4e  %q\n", i+1, h.Seq, h.Score, h.Text)
	}
	return nil
}
