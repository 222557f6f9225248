package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/experiments/speed"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

const benchSynopsis = "throughput|decode [--mixers attention,protot,deltanet,mamba] [--ctx 256,1024,4096,8192] " +
	"[--preset tiny|small|paper] [--set \"key=value;...\"]... [--out DIR]"

// cmdBench runs the speed study (experiments/speed) in one mode: training tokens/s and peak memory against the
// context, or decoding time per token, for each mixer, next to theory/cost's predictions. It always measures (a
// stored result of the same configuration is replaced), prints the table and stores the result under --out. The
// study's protocol, which notebook 10 and the scorecard read, runs both modes: `protolab run speed --preset small`.
func cmdBench(args []string, stdout io.Writer) error {
	fs := newFlags("bench", benchSynopsis, stdout)
	mixers := fs.String("mixers", "", "comma-separated mixers (default: the preset's, all four)")
	ctxs := fs.String("ctx", "", "comma-separated context lengths T, ascending (default: the preset's)")
	preset := fs.String("preset", "small", "preset: tiny, small or paper")
	set := newSetFlag(fs, "token_budget=4096;protot.chunk_size=32", "protolab keys speed")
	out := fs.String("out", run.OutRoot(), "root folder of stored results (run.Out), where notebook 10 looks")
	words, err := parseArgs(fs, args, "throughput|decode")
	if err != nil {
		return err
	}
	if len(words) == 0 {
		fs.Usage()
		return errors.New("bench: name the mode: throughput or decode")
	}
	mode := words[0]
	if mode != speed.ModeThroughput && mode != speed.ModeDecode {
		return errors.Errorf("bench: unknown mode %q; want throughput or decode", mode)
	}
	cfg, err := speed.Preset(*preset)
	if err != nil {
		return err
	}
	cfg.Mode = mode
	if err := run.Override(&cfg, set.String()); err != nil {
		return err
	}
	if *mixers != "" {
		cfg.Mixers = strings.Split(*mixers, ",")
	}
	if *ctxs != "" {
		cfg.Contexts = nil
		for _, s := range strings.Split(*ctxs, ",") {
			T, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return errors.Errorf("bench: --ctx %q: %q is not an integer", *ctxs, s)
			}
			cfg.Contexts = append(cfg.Contexts, T)
		}
	}
	if err := cfg.Validate(); err != nil { // before measuring anything
		return err
	}
	scope, stop := interruptContext()
	defer stop()
	res, err := speed.Runs.Run(cfg, run.Out(*out), run.Overrides(set.String()), run.Context(scope))
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, res)
	if *out != "" {
		path, err := store.CachePath(run.StudyDir(*out, speed.Study), run.ResultName, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "results in %s\n", path)
	}
	return nil
}
