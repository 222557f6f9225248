package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/experiments/architecture"
	"github.com/protolab/protolab/experiments/attribution"
	"github.com/protolab/protolab/experiments/baseline"
	"github.com/protolab/protolab/experiments/fvec"
	"github.com/protolab/protolab/experiments/interp"
	"github.com/protolab/protolab/experiments/prismhead"
	"github.com/protolab/protolab/experiments/robustness"
	"github.com/protolab/protolab/experiments/speed"
	"github.com/protolab/protolab/experiments/steering"
	"github.com/protolab/protolab/experiments/suppression"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// study is one entry of the study table: `protolab run <name>` and `protolab keys <name>`.
type study struct {
	name, summary string
	// config returns a pointer to the named preset's configuration (for overrides and keys).
	config func(preset string) (any, error)
	// validate checks a configuration config returned.
	validate func(cfg any) error
	// run runs (fresh) or loads-or-runs the study of cfg (a pointer config returned) and returns its report.
	run func(cfg any, fresh bool, opts ...run.Option) (fmt.Stringer, error)
}

// entry builds a study of the table from its entry points (run.Entry) and a one-line summary.
func entry[C run.Config, R fmt.Stringer](e run.Entry[C, R], summary string) study {
	return study{
		name: e.Study, summary: summary,
		config: func(p string) (any, error) {
			c, err := e.Preset(p)
			if err != nil {
				return nil, err
			}
			return &c, nil
		},
		validate: func(cfg any) error { return (*cfg.(*C)).Validate() },
		run: func(cfg any, fresh bool, opts ...run.Option) (fmt.Stringer, error) {
			c := *cfg.(*C)
			if fresh {
				return e.Run(c, opts...)
			}
			return e.LoadOrRun(c, opts...)
		},
	}
}

// studies lists every study `protolab run` runs, in the order of the papers and notebooks.
var studies = []study{
	entry(baseline.Runs, "the baseline LM: train, perplexity, samples (notebook 00)"),
	entry(architecture.Runs, "ProtoT vs LLaMA, DeltaNet, Mamba at equal parameters: perplexity, sweep, generation, "+
		"classification (notebook 10)"),
	entry(speed.Runs, "training throughput and decoding time against the context (both modes by default; "+
		"mode=throughput or decode for one), beside theory/cost (notebook 10)"),
	entry(interp.Runs, "ProtoT interpretability: naming, disentanglement, dashboards, interventions (notebook 11)"),
	entry(robustness.Runs, "ProtoT and LLaMA under typos and synonyms: routing and prediction changes (notebook 11)"),
	entry(prismhead.Runs, "PRISM head vs dense: quality, coverage, usage, prototype-space curvature, clustering "+
		"sweep (notebook 20)"),
	entry(attribution.Runs, "PRISM training-data attribution: cached prototype statistics vs EK-FAC and gradient "+
		"products, against the prototype-space reference and retraining (notebook 20)"),
	entry(steering.Runs, "PRISM steering: sparse prototype controllers on multiple-choice concept tasks "+
		"(notebook 20)"),
	entry(suppression.Runs, "PRISM concept suppression: select prototypes by keywords, generate and score "+
		"with them suppressed (notebook 20)"),
	entry(fvec.Runs, "function vectors: mean-field theory, models A/B/C, depth advantage, patching (notebook 30)"),
}

func findStudy(name string) (study, error) {
	var names []string
	for _, s := range studies {
		if s.name == name {
			return s, nil
		}
		names = append(names, s.name)
	}
	return study{}, errors.Errorf("unknown study %q; studies: %s", name, strings.Join(names, ", "))
}

// studyConfig returns the preset of the study with the overrides applied.
func studyConfig(s study, preset, set string) (any, error) {
	cfg, err := s.config(preset)
	if err != nil {
		return nil, err
	}
	if err := run.Override(cfg, set); err != nil {
		return nil, err
	}
	return cfg, s.validate(cfg)
}

// studyArg parses "<study> [flags]" (the study may also follow the flags) and returns the study, or an error when
// none or more than one word is given.
func studyArg(fs *flag.FlagSet, args []string) (study, error) {
	words, err := parseArgs(fs, args, "<study>")
	if err != nil {
		return study{}, err
	}
	if len(words) == 0 {
		fs.Usage()
		return study{}, errors.Errorf("%s: name a study", strings.TrimPrefix(fs.Name(), "protolab "))
	}
	return findStudy(words[0])
}

func cmdRun(args []string, stdout io.Writer) error {
	fs := newFlags("run", "<study> [--preset tiny|small|paper] [--set \"key=value;...\"]... [--out DIR] [--fresh]",
		stdout)
	preset := fs.String("preset", "small", "preset: tiny, small or paper")
	set := newSetFlag(fs, "train.steps=100;seed=2", "protolab keys <study>")
	out := fs.String("out", run.OutRoot(), "root folder of stored models and results (shared by the studies and "+
		"notebooks)")
	fresh := fs.Bool("fresh", false, "run even when a result for this configuration is stored (models are "+
		"still loaded when trained before)")
	s, err := studyArg(fs, args)
	if err != nil {
		return err
	}
	cfg, err := studyConfig(s, *preset, set.String())
	if err != nil {
		return err
	}
	scope, stop := interruptContext()
	defer stop()
	// `protolab run` makes results (`make reproduce`): it loads the user's own stored one, never a shipped one.
	res, err := s.run(cfg, *fresh, run.Out(*out), run.Shipped(""), run.Overrides(set.String()), run.Context(scope))
	if err != nil {
		return err
	}
	text := res.String()
	fmt.Fprint(stdout, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(stdout) // a report that does not end its last line must not run into the next one
	}
	if *out != "" {
		path, err := store.CachePath(run.StudyDir(*out, s.name), run.ResultName, cfg) // the key's JSON is the config's
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "result in %s\n", path)
	}
	return nil
}

// cmdKeys prints every key of a study's configuration with the preset's value, one valid --set assignment a line,
// then, as "#" comments, the keys that the study's protocol searches over instead of using (run.Searcher).
func cmdKeys(args []string, stdout io.Writer) error {
	fs := newFlags("keys", "<study> [--preset tiny|small|paper]", stdout)
	preset := fs.String("preset", "small", "preset whose values to show")
	s, err := studyArg(fs, args)
	if err != nil {
		return err
	}
	cfg, err := s.config(*preset)
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
	keys := run.Keys(cfg)
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := values[k]
		if !ok { // omitted from the JSON (omitempty) because it holds its zero value
			v = omittedValue(cfg, k)
		}
		fmt.Fprintf(stdout, "%s=%s\n", k, v)
	}
	for _, l := range run.SearchedLines(cfg, nil) {
		fmt.Fprintf(stdout, "# %s\n", l) // a comment: the lines above stay valid --set assignments
	}
	return nil
}

// omittedValue returns the JSON of the field that the dotted key names in cfg (a pointer to a struct): for the keys
// whose zero value JSON omits, so that every line of `protolab keys` is a valid --set assignment.
func omittedValue(cfg any, key string) string {
	v := reflect.ValueOf(cfg)
	for _, name := range strings.Split(key, ".") {
		var ok bool
		if v, ok = fieldByJSON(reflect.Indirect(v), name); !ok {
			return ""
		}
	}
	b, _ := json.Marshal(v.Interface())
	return string(b)
}

// fieldByJSON returns the field of struct v whose JSON name is name, looking into embedded structs as JSON does.
func fieldByJSON(v reflect.Value, name string) (reflect.Value, bool) {
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			if fv, ok := fieldByJSON(v.Field(i), name); ok {
				return fv, true
			}
			continue
		}
		if f.IsExported() && (tag == name || (tag == "" && f.Name == name)) {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
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
