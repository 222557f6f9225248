package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/experiments/prism"
	"github.com/protolab/protolab/workbench/run"
)

const attributeSynopsis = `--query "prompt|completion" [--method prism|ekfac|graddot|...] [--top 10] ` +
	`[--preset tiny|small|paper] [--set "key=value;..."] [--out DIR] | --compare`

// cmdAttribute ranks the training sequences of the PRISM study's model (experiments/prism, trained or loaded from
// --out) for a query text with one attribution method, or (--compare) runs the whole attribution study and prints
// its table.
func cmdAttribute(args []string, stdout io.Writer) error {
	fs := newFlags("attribute", attributeSynopsis, stdout)
	query := fs.String("query", "", `text to attribute; with "|" only the completion after it is attributed`)
	method := fs.String("method", prism.MethodPrism, "method: "+strings.Join(prism.Methods, ", "))
	top := fs.Int("top", 10, "number of training sequences to print")
	preset := fs.String("preset", "small", "preset: tiny, small or paper")
	set := fs.String("set", "", `overrides of the prism config, e.g. "prism.top_k=8;attribution.train_seqs=500"`)
	out := fs.String("out", run.OutDir("prism"), "folder caching the trained model and the attribution cache")
	compare := fs.Bool("compare", false, "run every method on the validation queries and print the comparison table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.Errorf("attribute: unexpected arguments %q", fs.Args())
	}
	if (*query == "") == !*compare {
		fs.Usage()
		return errors.New("attribute: give --query TEXT or --compare")
	}
	if *top < 1 {
		return errors.Errorf("attribute: --top=%d, want ≥ 1", *top)
	}
	cfg, err := prism.Preset(*preset)
	if err != nil {
		return err
	}
	if err := run.Override(&cfg, *set); err != nil {
		return err
	}
	cfg.Out = *out
	opts := []prism.Option{prism.Progress(os.Stderr), prism.WithOverrides(*set)}
	if *compare {
		res, err := prism.RunAttribution(cfg, opts...)
		if err != nil {
			return err
		}
		return prism.WriteAttributionTable(stdout, res)
	}
	m, err := prism.LoadOrTrain(cfg, false, opts...)
	if err != nil {
		return err
	}
	at, err := prism.NewAttributor(m, cfg.Attribution)
	if err != nil {
		return err
	}
	hits, err := at.Query(*query, *method, *top)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "query %q, method %s, %d training sequences (scores: influence / %d tokens; positive = helpful)\n",
		*query, *method, len(at.Corpus), at.NumTokens)
	for i, h := range hits {
		fmt.Fprintf(stdout, "%3d. seq %-6d %+.4e  %q\n", i+1, h.Seq, h.Score, h.Text)
	}
	return nil
}
