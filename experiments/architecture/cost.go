package architecture

import (
	"slices"

	"github.com/protolab/protolab/workbench/run"
)

// Cost estimates the compute of the study at c (run.Cost's conventions), counting the models compute trains in
// its order and keeping each once, as its trainer does (by lm.Config.Hash): per corpus the learning-rate search
// (inits × mixers × lr_grid, tuning seed), the comparisons (inits × mixers × seeds) and the shared-rate comparison;
// then the sweep (mixers × widths × steps × seeds), then the classification fine-tuning of each mixer's top model
// (tasks × classify.train.steps × classify.batch_size × classify.max_tokens tokens). The rate the search will
// choose is unknown here: the count assumes it is not train.lr, the most runs the protocol can train. WordNet, when
// listed, is assumed installed. Test-set perplexities with test.batches=0 (all) and generation are not counted.
func (c Config) Cost() run.Cost {
	var total run.Cost
	seen := map[string]bool{}
	train := func(p Point, seed uint64) {
		mc, _, err := c.ModelAt(p, seed)
		if err != nil || seen[mc.Hash()] {
			return // Validate reports an invalid model; a shared one trains once
		}
		seen[mc.Hash()] = true
		total = total.Add(mc.Cost())
		if hasTestData(p.Source) && p.Width == c.Model.Width && p.Steps == c.Train.Steps {
			total = total.Add(mc.TestCost(c.testCorpora() * c.Test.Batches))
		}
	}
	src, primary := c.Data.Source, c.primaryInit()
	chosen := c.Train.LR
	if i := slices.IndexFunc(c.LRGrid, func(lr float64) bool { return lr != c.Train.LR }); i >= 0 {
		chosen = c.LRGrid[i] // a searched rate other than train.lr: the shared comparison trains its own seeds
	}
	point := func(mixer, source, init string, lr float64, w, steps int) Point {
		return Point{Mixer: mixer, Source: source, Init: init, LR: lr, Width: w, Steps: steps}
	}
	for _, source := range c.Corpora {
		for _, init := range c.Inits {
			for _, m := range c.Mixers {
				for _, lr := range c.LRGrid {
					train(point(m, source, init, lr, c.Model.Width, c.Train.Steps), c.tuneSeed())
				}
			}
		}
		for _, init := range c.Inits {
			for _, m := range c.Mixers {
				lr := c.Train.LR
				if len(c.LRGrid) > 0 {
					lr = chosen
				}
				for _, seed := range c.Seeds {
					train(point(m, source, init, lr, c.Model.Width, c.Train.Steps), seed)
				}
			}
		}
		if !c.SharedLR {
			continue
		}
		for _, m := range c.Mixers {
			for _, seed := range c.Seeds {
				train(point(m, source, primary, c.Train.LR, c.Model.Width, c.Train.Steps), seed)
			}
		}
	}
	for _, m := range c.Mixers {
		for _, w := range c.Sweep.Widths {
			for _, st := range c.Sweep.Steps {
				for _, seed := range c.Seeds {
					train(point(m, src, primary, c.Train.LR, w, st), seed)
				}
			}
		}
	}
	for _, m := range c.Mixers { // each mixer's first-seed model of the primary comparison
		mc, _, err := c.ModelAt(point(m, c.Corpora[0], primary, chosen, c.Model.Width, c.Train.Steps), c.Seeds[0])
		if err == nil {
			total = total.Add(c.Classify.Cost(mc.Model))
		}
	}
	return total.Note("lr search assumed to choose a rate other than train.lr; classification fine-tuning in the " +
		"tokens, not in runs; generation not counted")
}

// testCorpora is the number of test corpora a comparison model is scored on: the test corpus and, with
// test.holdout_seed, the held-back one.
func (c Config) testCorpora() int {
	if c.Test.HoldoutSeed != 0 {
		return 2
	}
	return 1
}
