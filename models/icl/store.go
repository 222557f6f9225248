package icl

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/gomlx/compute"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/linattn"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// A stored chain is a folder (Chain.Dir) holding
//
//	model.safetensors  the last model's trainable variables (Model.Save)
//	chain.json         the chain's scores, validation MSEs, training records and seconds (storedChain), written last
//
// each written atomically, so a folder with chain.json is complete.
const (
	ChainFile = "chain.json"
	ModelFile = "model.safetensors"
)

// storedChain is chain.json: a ChainResult without its model, and the chain it belongs to.
type storedChain struct {
	Prior    string     `json:"prior"`
	Row      string     `json:"row"`
	Seed     int        `json:"seed"` // Chain.Index
	M        []int      `json:"m"`
	Test     []Score    `json:"test"`
	HeldOut  []Score    `json:"held_out"`
	Val      []float64  `json:"val"`
	Training []Training `json:"training"`
	// Seconds is the training wall time of the last model (Model.Seconds).
	Seconds float64 `json:"seconds"`
}

// Save writes the model's trainable variables to path (safetensors, workbench/store names), atomically.
func (m *Model) Save(path string) error {
	return store.ExportContext(m.vars, path, store.Trainable, nil)
}

// Load returns the model cfg that Save wrote to path, as Train returns it: its variables in a store made as Train
// makes it for seed, the same evaluation executable, Seconds set to seconds; only History is nil.
func Load(backend compute.Backend, cfg linattn.Config, seed uint64, seconds float64, path string) (*Model, error) {
	vars := run.NewStore(seed)
	if _, err := store.ImportContext(vars, path); err != nil {
		return nil, err
	}
	eval, err := newEval(backend, vars, cfg)
	if err != nil {
		return nil, err
	}
	return &Model{Config: cfg, vars: vars, Seconds: seconds, eval: eval}, nil
}

// ms returns the chain's M values.
func (c *Chain) ms() []int {
	out := make([]int, len(c.Segments))
	for i, sg := range c.Segments {
		out[i] = sg.Model.Measurements
	}
	return out
}

// load returns the chain stored in Dir by an earlier Run and true, or false when there is none: no Dir, or a chain
// folder without chain.json (a run stopped while storing it), which is logged and retrained. A chain.json that
// exists is trusted only whole: one that cannot be read, that belongs to another chain, or whose model cannot be
// loaded is an error naming the file and the fix.
func (c *Chain) load(backend compute.Backend) (ChainResult, bool, error) {
	var out ChainResult
	dir, ms := c.Dir, c.ms()
	if dir == "" || len(ms) == 0 {
		return out, false, nil
	}
	path := filepath.Join(dir, ChainFile)
	if _, err := os.Stat(path); err != nil {
		if _, derr := os.Stat(dir); derr == nil {
			c.logf("%s prior, %s, seed %d: %s has no %s (a run stopped while storing it): retraining", c.Prior,
				c.Row, c.Index, run.ShowPath(dir), ChainFile)
		}
		return out, false, nil
	}
	fix := func(err error, file string) error {
		return errors.WithMessagef(err, "icl: stored chain file %s is unusable; delete the folder %s to retrain this "+
			"chain (or %s to retrain the whole run)", file, dir, filepath.Dir(dir))
	}
	var sc storedChain
	if err := store.LoadJSON(path, &sc); err != nil {
		return out, false, fix(err, path)
	}
	n := len(ms)
	if sc.Prior != c.Prior || sc.Row != c.Row || sc.Seed != c.Index || !slices.Equal(sc.M, ms) ||
		len(sc.Test) != n || len(sc.HeldOut) != n || len(sc.Val) != n || len(sc.Training) != n {
		return out, false, fix(errors.Errorf("it records %s prior, row %s, seed %d, M=%v with %d/%d/%d/%d entries, "+
			"want %s prior, row %s, seed %d, M=%v with %d each", sc.Prior, sc.Row, sc.Seed, sc.M, len(sc.Test),
			len(sc.HeldOut), len(sc.Val), len(sc.Training), c.Prior, c.Row, c.Index, ms, n), path)
	}
	out.Test, out.HeldOut, out.Val, out.Training = sc.Test, sc.HeldOut, sc.Val, sc.Training
	modelPath := filepath.Join(dir, ModelFile)
	last, err := Load(backend, c.Segments[n-1].Model, c.Seed, sc.Seconds, modelPath)
	if err != nil {
		return out, false, fix(err, modelPath)
	}
	out.Last = last
	c.logf("%s prior, %s, seed %d: loaded from progress (M=%v, last validation MSE %.4f; %s)", c.Prior, c.Row,
		c.Index, ms, sc.Val[n-1], run.ShowPath(dir))
	return out, true, nil
}

// store stores a finished chain in Dir (nothing when Dir is "" or there is no model): the model first, then
// chain.json, each written atomically, so a chain folder with chain.json is complete.
func (c *Chain) store(r ChainResult) error {
	if c.Dir == "" || r.Last == nil {
		return nil
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return errors.Wrap(err, "icl: storing a chain")
	}
	if err := r.Last.Save(filepath.Join(c.Dir, ModelFile)); err != nil {
		return errors.WithMessage(err, "icl: storing a chain")
	}
	sc := storedChain{Prior: c.Prior, Row: c.Row, Seed: c.Index, M: c.ms(), Test: r.Test, HeldOut: r.HeldOut,
		Val: r.Val, Training: r.Training, Seconds: r.Last.Seconds}
	return errors.WithMessage(store.SaveJSON(filepath.Join(c.Dir, ChainFile), sc), "icl: storing a chain")
}
