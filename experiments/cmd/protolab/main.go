// Command protolab runs ProtoLab's studies headlessly: progress on stderr, results on disk.
//
//	protolab run <study> --preset tiny|small|paper --set "train.steps=100" [--out DIR] [--fresh]
//	protolab keys <study> [--preset P]
//	protolab train    --preset tiny|small|paper --set "model.num_layers=4;train.lr=3e-4" --out DIR [--fresh]
//	protolab eval     --out DIR [--batches N]
//	protolab generate --out DIR --prompt "The queen" [--n 3] [--tokens 64] [--temperature 0.8] [--top-k 40]
//	protolab export   --out DIR --to FILE.safetensors
//	protolab bench throughput|decode [--mixers …] [--ctx …] [--preset P] [--set …] [--out DIR]
//	protolab attribute --query "prompt|completion" [--method …] | --compare
//	protolab report [--out DIR] [--shipped DIR] [--md FILE] [--compare DIR]
//	protolab figures [--results DIR] [--dir DIR]
//	protolab launch --devices 0,1,2,3 [--runs FILE] -- COMMAND ARGS... [::: RUN...]
//	protolab backend [--check] [--install [--dir DIR]]
//	protolab cost [--preset paper] [--rate FLOP/s] [--cpu-rate FLOP/s]
//
// Every command has --help. Flags and the positional word (<study>, the bench mode) may come in any order; any other
// word is an error naming it, and every flag is checked before any work starts. --set may be repeated: the
// assignments of every --set are applied in order, so a later value of a key wins.
//
// Ctrl-C (or SIGTERM) stops the command at the next safe point (a training run checkpoints first; data preparation,
// evaluation and sampling stop between documents, batches or steps) and the exit status is 130 (143 for SIGTERM);
// a second Ctrl-C exits at once. Files are written under a temporary name and renamed, so none is left half-written.
//
// The backend is chosen by $GOMLX_BACKEND (default: XLA where a plugin is installed, otherwise the pure-Go backend);
// `protolab backend` says which and why.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/experiments/baseline"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/eval"
	"github.com/protolab/protolab/workbench/run"
)

type command struct {
	name, summary string
	run           func(args []string, stdout io.Writer) error
}

var commands = []command{
	{"run", "run a study (or load its stored result) from a preset and overrides; prints its report", cmdRun},
	{"keys", "list the configuration keys of a study that --set accepts, with the preset's values", cmdKeys},
	{"train", "train the baseline LM into one run folder; writes weights, tokenizer, checkpoints, result.json", cmdTrain},
	{"eval", "validation perplexity of a trained run folder", cmdEval},
	{"generate", "sample continuations of a prompt from a trained run folder", cmdGenerate},
	{"export", "write a trained run folder's model as one PyTorch-oriented safetensors file", cmdExport},
	{"attribute", "the training sequences that most influence a query (PRISM's cached prototypes, EK-FAC, ...)", cmdAttribute},
	{"report", "the scorecard: each paper claim against the stored results, with a verdict (REPORT.md, .html); --compare checks a reproduction", cmdReport},
	{"figures", "the notebooks' figures of the stored protocol results (results/), as SVG files (results/figures)", cmdFigures},
	{"bench", "the speed study: training throughput or decoding time vs context for each mixer (table + JSON)", cmdBench},
	{"backend", "which backend (XLA or pure Go) runs and why, the PJRT plugins found; --check starts it, --install downloads plugins", cmdBackend},
	{"cost", "estimated compute of every study at a preset: runs, tokens, parameters, FLOPs and time at stated rates", cmdCost},
	{"launch", "a sweep as one process per device: each run of a command on the next free GPU of --devices", cmdLaunch},
}

func main() {
	err := dispatch(os.Args[1:], os.Stdout)
	if code := interruptExitCode(); code != 0 {
		if err != nil { // where it stopped
			fmt.Fprintf(os.Stderr, "protolab: %v\n", err)
		}
		fmt.Fprintln(os.Stderr, "protolab: interrupted; files written so far are complete, and the same command "+
			"resumes a training run from its last checkpoint")
		os.Exit(code)
	}
	if err != nil {
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
	fmt.Fprintln(w, "\nstudies (protolab run <study>):")
	for _, s := range studies {
		fmt.Fprintf(w, "  %-12s %s\n", s.name, s.summary)
	}
	fmt.Fprintln(w, "\nFlags and the positional word may come in any order; --set may be repeated (applied in order, a "+
		"later value\nof a key wins). Ctrl-C stops a command at the next safe point (exit status 130; a training "+
		"run resumes\nfrom its last checkpoint when run again); a second Ctrl-C exits at once.")
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

// baselineConfig returns the baseline study's preset with the overrides applied and validated.
func baselineConfig(preset, set string) (baseline.Config, error) {
	cfg, err := baseline.Preset(preset)
	if err != nil {
		return cfg, err
	}
	if err := run.Override(&cfg, set); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

func cmdTrain(args []string, stdout io.Writer) error {
	fs := newFlags("train", "--preset tiny|small|paper [--set \"key=value;...\"]... --out DIR", stdout)
	preset := fs.String("preset", "small", "preset: tiny, small or paper")
	set := newSetFlag(fs, "model.num_layers=4;train.lr=3e-4", "protolab keys baseline; data.source=FILE trains on "+
		"your own .txt/.jsonl/.parquet data")
	out := fs.String("out", "", "the run folder (required); an interrupted run resumes from its checkpoints, a "+
		"folder holding another configuration is refused")
	fresh := fs.Bool("fresh", false, "delete the run in --out first and train from scratch (only a ProtoLab run "+
		"folder that no process is using; a folder holding other files is refused)")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("train: --out DIR is required")
	}
	cfg, err := baselineConfig(*preset, set.String())
	if err != nil {
		return err
	}
	if *fresh {
		if err := lm.RemoveRun(*out); err != nil {
			return errors.WithMessage(err, "train --fresh")
		}
	}
	scope, stop := interruptContext()
	defer stop()
	m, err := lm.Train(cfg.Config, *out, run.Overrides(set.String()), run.Context(scope))
	if err != nil {
		return err
	}
	res := &baseline.Result{Model: m.Result, Dir: m.Dir}
	if res.Samples, res.Generation, err = baseline.Samples(m, cfg); err != nil {
		return err
	}
	fmt.Fprint(stdout, res)
	fmt.Fprintf(stdout, "results in %s\n", *out)
	return nil
}

func cmdEval(args []string, stdout io.Writer) error {
	fs := newFlags("eval", "--out DIR [--batches N]", stdout)
	out := fs.String("out", "", "a folder written by protolab train (required)")
	batches := fs.Int("batches", 0, "validation batches to evaluate (0: the run's eval_batches)")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("eval: --out DIR is required")
	}
	if *batches < 0 {
		return errors.Errorf("eval: --batches=%d, want ≥ 0 (0: the run's eval_batches)", *batches)
	}
	m, stop, err := openInterruptible(*out)
	if err != nil {
		return err
	}
	defer stop()
	prep, err := m.Data()
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
	prompt := fs.String("prompt", "", "prompt text (required); it starts a document")
	n := fs.Int("n", 1, "number of samples")
	tokens := fs.Int("tokens", 64, "new tokens per sample (fewer when a sample ends its document)")
	temp := fs.Float64("temperature", 0.8, "sampling temperature (0: greedy)")
	topK := fs.Int("top-k", 40, "sample among the k most likely tokens (0: all)")
	seed := fs.Uint64("seed", 1, "sampling seed")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *out == "" || *prompt == "" {
		return errors.New("generate: --out DIR and --prompt TEXT are required")
	}
	if *n <= 0 {
		return errors.Errorf("generate: --n=%d, want > 0", *n)
	}
	sc := eval.DefaultSampleConfig()
	sc.MaxNewTokens, sc.Temperature, sc.TopKTokens, sc.Seed, sc.StopToken = *tokens, *temp, *topK, *seed, -1
	switch { // every flag before loading the model
	case *tokens <= 0:
		return errors.Errorf("generate: --tokens=%d, want > 0", *tokens)
	case !(*temp >= 0) || math.IsInf(*temp, 0):
		return errors.Errorf("generate: --temperature=%g, want a finite value ≥ 0 (0: greedy)", *temp)
	case *topK < 0:
		return errors.Errorf("generate: --top-k=%d, want ≥ 0 (0: every token)", *topK)
	}
	m, stop, err := openInterruptible(*out)
	if err != nil {
		return err
	}
	defer stop()
	prompts := make([]string, *n)
	for i := range prompts {
		prompts[i] = *prompt
	}
	if eos, ok := m.Tokenizer.SpecialID("<|eos|>"); ok {
		sc.StopToken = eos
	}
	texts, _, stats, err := m.Generate(prompts, sc)
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

// openInterruptible opens the run folder dir (lm.Open) with Ctrl-C stopping its work at the next safe point
// (interruptContext); call stop when done.
func openInterruptible(dir string) (m *lm.Model, stop func(), err error) {
	if m, err = lm.Open(dir); err != nil {
		return nil, nil, err
	}
	scope, stop := interruptContext()
	m.Interrupt = scope
	return m, stop, nil
}
