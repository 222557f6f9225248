// Command protolab runs ProtoLab experiments headlessly: progress on stderr, results on disk.
//
//	protolab train    --preset tiny|small|paper --set "model.num_layers=4;train.lr=3e-4" --out DIR
//	protolab eval     --out DIR [--batches N]
//	protolab generate --out DIR --prompt "The queen" [--n 3] [--tokens 64] [--temperature 0.8] [--top-k 40]
//
// Every command has --help. The backend is chosen by $GOMLX_BACKEND (default: XLA where a plugin is installed,
// otherwise the pure-Go backend).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/experiments/lm"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

type command struct {
	name, summary string
	run           func(args []string, stdout io.Writer) error
}

var commands = []command{
	{"train", "train the baseline LM from a preset and overrides; writes weights, tokenizer, checkpoints, result.json", cmdTrain},
	{"eval", "validation perplexity of a trained run folder", cmdEval},
	{"generate", "sample continuations of a prompt from a trained run folder", cmdGenerate},
	{"keys", "list the configuration keys --set accepts, with the preset's values", cmdKeys},
	{"bench", "ProtoT study: training throughput or decoding time vs context for each mixer (table + JSON)", cmdBench},
	{"attribute", "PRISM study: the training sequences that most influence a query (cached prototypes, EK-FAC, ...)", cmdAttribute},
}

func main() {
	if err := dispatch(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "protolab: %v\n", err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: protolab <command> [flags]   (protolab <command> --help for its flags)")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
}

func dispatch(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout)
		}
	}
	usage(os.Stderr)
	return errors.Errorf("unknown command %q", args[0])
}

func newFlags(name, synopsis string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("protolab "+name, flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "usage: protolab %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// presetConfig returns the preset with the overrides applied.
func presetConfig(preset, set string) (lm.Config, error) {
	cfg, err := lm.Preset(preset)
	if err != nil {
		return cfg, err
	}
	return cfg, run.Override(&cfg, set)
}

func cmdTrain(args []string, stdout io.Writer) error {
	fs := newFlags("train", "--preset tiny|small|paper [--set \"key=value;...\"] --out DIR", stdout)
	preset := fs.String("preset", "small", "preset: tiny, small or paper")
	set := fs.String("set", "", `overrides, e.g. "model.num_layers=4;train.lr=3e-4" (see protolab keys)`)
	out := fs.String("out", "", "output folder (required); an interrupted run resumes from its checkpoints")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("train: --out DIR is required")
	}
	cfg, err := presetConfig(*preset, *set)
	if err != nil {
		return err
	}
	cfg.Out = *out
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := lm.Run(cfg, lm.WithOverrides(*set), lm.WithContext(ctx))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "params %d, tokens seen %d, validation loss %.4f, perplexity %.3f\n",
		res.NumParams, res.Tokens.SeenInTrain, res.Val.Loss, res.Val.Perplexity)
	if n := len(res.History.Steps); n > 0 {
		fmt.Fprintf(stdout, "train tokens/s (last step) %.0f, wall %.1f s\n",
			res.History.Steps[n-1].TokensPerSec, res.Provenance.Timings["train"])
	}
	for _, s := range res.Samples {
		fmt.Fprintf(stdout, "sample: %s|%s\n", s.Prompt, s.Completion)
	}
	fmt.Fprintf(stdout, "results in %s\n", *out)
	return nil
}

func cmdEval(args []string, stdout io.Writer) error {
	fs := newFlags("eval", "--out DIR [--batches N]", stdout)
	out := fs.String("out", "", "a folder written by protolab train (required)")
	batches := fs.Int("batches", 0, "validation batches to evaluate (0: the run's eval_batches)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("eval: --out DIR is required")
	}
	m, err := lm.Open(*out)
	if err != nil {
		return err
	}
	d := m.Config.Data
	d.Seed = m.Config.Seed
	prep, err := lmdata.Prepare(d, *out+"/"+lm.TokenizerFile)
	if err != nil {
		return err
	}
	n := m.Config.EvalBatches
	if *batches > 0 {
		n = *batches
	}
	vals, err := prep.ValTensors(n)
	if err != nil {
		return err
	}
	res, err := m.Perplexity(vals)
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	fmt.Fprintln(stdout, string(b))
	return nil
}

func cmdGenerate(args []string, stdout io.Writer) error {
	fs := newFlags("generate", "--out DIR --prompt TEXT [--n N] [--tokens N] [--temperature T] [--top-k K]", stdout)
	out := fs.String("out", "", "a folder written by protolab train (required)")
	prompt := fs.String("prompt", "", "prompt text (required)")
	n := fs.Int("n", 1, "number of samples")
	tokens := fs.Int("tokens", 64, "new tokens per sample")
	temp := fs.Float64("temperature", 0.8, "sampling temperature (0: greedy)")
	topK := fs.Int("top-k", 40, "sample among the k most likely tokens (0: all)")
	seed := fs.Uint64("seed", 1, "sampling seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *prompt == "" {
		return errors.New("generate: --out DIR and --prompt TEXT are required")
	}
	if *n <= 0 {
		return errors.Errorf("generate: --n=%d, want > 0", *n)
	}
	m, err := lm.Open(*out)
	if err != nil {
		return err
	}
	prompts := make([]string, *n)
	for i := range prompts {
		prompts[i] = *prompt
	}
	sc := m.Config.Sample
	sc.MaxNewTokens, sc.Temperature, sc.TopK, sc.Seed, sc.StopToken = *tokens, *temp, *topK, *seed, -1
	texts, stats, err := m.Generate(prompts, sc)
	if err != nil {
		return err
	}
	for _, t := range texts {
		fmt.Fprintf(stdout, "%s%s\n", *prompt, t)
	}
	fmt.Fprintf(os.Stderr, "protolab: %d tokens in %.2f s (%.0f tokens/s, %.1f ms per step)\n",
		stats.PromptTokens+stats.GeneratedTokens, stats.Seconds, stats.TokensPerS, stats.MsPerStep)
	return nil
}

func cmdKeys(args []string, stdout io.Writer) error {
	fs := newFlags("keys", "[--preset tiny|small|paper]", stdout)
	preset := fs.String("preset", "small", "preset whose values to show")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := lm.Preset(*preset)
	if err != nil {
		return err
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	var tree map[string]any
	if err := json.Unmarshal(b, &tree); err != nil {
		return err
	}
	values := map[string]string{}
	flatten("", tree, values)
	keys := run.Keys(&cfg)
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "%s=%s\n", k, values[k])
	}
	return nil
}

func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			flatten(strings.TrimPrefix(prefix+"."+k, "."), x, out)
		}
		return
	}
	b, _ := json.Marshal(v)
	out[prefix] = string(b)
}
