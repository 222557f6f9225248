package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/experiments/protot"
	"github.com/protolab/protolab/workbench/run"
)

const benchSynopsis = "throughput|decode [--mixers attention,protot,deltanet,mamba] [--ctx 256,1024,4096,8192] " +
	"[--preset tiny|small|paper] [--set \"key=value;...\"] [--out FILE.json]"

// cmdBench runs the ProtoT throughput study (experiments/protot): training tokens/s and peak memory against the
// context, or decoding time per token, for each mixer, next to theory/cost's predictions; it prints a table and
// writes the result as JSON.
func cmdBench(args []string, stdout io.Writer) error {
	fs := newFlags("bench", benchSynopsis, stdout)
	mixers := fs.String("mixers", "", "comma-separated mixers (default: the preset's, all four)")
	ctxs := fs.String("ctx", "", "comma-separated context lengths T, ascending (default: the preset's)")
	preset := fs.String("preset", "small", "preset: tiny, small or paper")
	set := fs.String("set", "", `overrides of the bench config, e.g. "token_budget=4096;protot.chunk_size=32"`)
	out := fs.String("out", "", "JSON file for the result, written after every configuration "+
		"(default: $PROTOLAB_OUT/runs/protot/bench-MODE-PRESET.json, or runs/protot/… without PROTOLAB_OUT, where "+
		"notebook 10 finds it)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if err := fs.Parse(args); err != nil {
			return err // --help
		}
		fs.Usage()
		return errors.New("bench: the first argument must be throughput or decode")
	}
	mode := args[0]
	if mode != "throughput" && mode != "decode" {
		return errors.Errorf("bench: unknown mode %q; want throughput or decode", mode)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.Errorf("bench: unexpected arguments %q", fs.Args())
	}
	cfg, err := protot.BenchPreset(*preset)
	if err != nil {
		return err
	}
	if err := run.Override(&cfg, *set); err != nil {
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
	cfg.Out = *out
	if cfg.Out == "" {
		cfg.Out = protot.BenchFile(run.OutDir("protot"), mode, *preset)
	}
	if err := cfg.Validate(); err != nil { // before creating any folder
		return err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Out), 0o755); err != nil {
		return errors.Wrapf(err, "bench: creating the folder of %s", cfg.Out)
	}
	var res *protot.BenchResult
	if mode == "throughput" {
		res, err = protot.RunThroughput(cfg, protot.BenchOverrides(*set))
	} else {
		res, err = protot.RunDecode(cfg, protot.BenchOverrides(*set))
	}
	if err != nil {
		return err
	}
	if mode == "throughput" {
		err = protot.WriteThroughputTable(stdout, res)
	} else {
		err = protot.WriteDecodeTable(stdout, res)
	}
	if err == nil && cfg.Out != "" {
		fmt.Fprintf(stdout, "results in %s\n", cfg.Out)
	}
	return err
}
