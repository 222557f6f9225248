package lm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// TestNoDecay_SameDecisionsAsTheOldNameList checks, for every variable of a decoder with each mixer and of a PRISM
// model, that the exemptions the layers declare (decoder.Config.NoDecay, which Train passes to fit) decide weight
// decay exactly as the list workbench/fit used to type by name did.
func TestNoDecay_SameDecisionsAsTheOldNameList(t *testing.T) {
	old := fit.Config{NoDecay: []string{"norm", "bias", "prototypes", "dt_proj", "a_log"}}
	var cfgs []Config
	for _, mixer := range decoder.KnownMixers {
		c := tinyConfig()
		c.Model.Mixer = mixer
		cfgs = append(cfgs, c)
	}
	cfgs = append(cfgs, tinyPrism())
	for _, c := range cfgs {
		c.Train.Steps, c.Train.WarmupSteps, c.Train.EvalEvery = 1, 0, 0
		if c.Head == HeadPrism {
			c.Prism.ProtoWarmup = 0
		}
		m, err := Train(c, "", run.Progress(nil))
		require.NoError(t, err, c.Model.Mixer)
		now := fit.Config{NoDecay: c.Resolved().Model.NoDecay()}
		exempt := 0
		for v := range m.Store.IterVariables() {
			if !v.Trainable || inOptimizer(v) {
				continue
			}
			path, rank := v.Path(), v.Shape().Rank()
			require.Equal(t, old.Decays(path, rank), now.Decays(path, rank), "%s: %s", c.Name(), path)
			if rank > 1 && !now.Decays(path, rank) {
				exempt++
			}
		}
		if c.Model.Mixer == decoder.MixerProtoT || c.Model.Mixer == decoder.MixerMamba || c.Head == HeadPrism {
			require.Positive(t, exempt, "%s exempts a matrix by name", c.Name())
		}
	}
}
