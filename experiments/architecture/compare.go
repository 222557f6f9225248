package architecture

import (
	"fmt"
	"slices"
	"strings"

	"github.com/protolab/protolab/workbench/run"
)

// Comparison is the equal-parameter comparison of the mixers on one corpus, under one init policy and one way of
// setting the learning rate.
type Comparison struct {
	Source string  `json:"source"`
	Init   string  `json:"init"`
	LRMode string  `json:"lr_mode"` // LRTuned or LRShared
	Width  int     `json:"width"`
	Steps  int     `json:"steps"`
	Scores []Score `json:"scores"` // one per mixer, in Config.Mixers order
	// Ranking is the order of the mixers by mean validation loss (lowest first) at every evaluation all of them
	// share, against training tokens.
	Ranking []RankPoint `json:"ranking,omitempty"`
	// Settled reports whether the ranking stopped moving: it is the same at every evaluation of the last half of
	// training (tokens ≥ half the final count) as at the end.
	Settled bool `json:"settled"`
}

// RankPoint is the mixers' order by mean validation loss after a number of training tokens.
type RankPoint struct {
	Tokens int      `json:"tokens"`
	Order  []string `json:"order"`
}

// Score returns the comparison's score of mixer, or nil.
func (c *Comparison) Score(mixer string) *Score {
	for i := range c.Scores {
		if c.Scores[i].Mixer == mixer {
			return &c.Scores[i]
		}
	}
	return nil
}

// Rank fills Ranking and Settled from the scores' curves.
func (c *Comparison) Rank() {
	c.Ranking, c.Settled = nil, false
	if len(c.Scores) == 0 {
		return
	}
	for _, p := range c.Scores[0].Curve {
		loss := map[string]float64{}
		for _, s := range c.Scores {
			if i := slices.IndexFunc(s.Curve, func(q CurvePoint) bool { return q.Tokens == p.Tokens }); i >= 0 {
				loss[s.Mixer] = s.Curve[i].Loss
			}
		}
		if len(loss) != len(c.Scores) {
			continue
		}
		var order []string
		for _, s := range c.Scores {
			order = append(order, s.Mixer)
		}
		slices.SortStableFunc(order, func(a, b string) int {
			switch {
			case loss[a] < loss[b]:
				return -1
			case loss[a] > loss[b]:
				return 1
			}
			return 0
		})
		c.Ranking = append(c.Ranking, RankPoint{Tokens: p.Tokens, Order: order})
	}
	if len(c.Ranking) == 0 {
		return
	}
	last := c.Ranking[len(c.Ranking)-1]
	c.Settled = true
	for _, r := range c.Ranking {
		if 2*r.Tokens >= last.Tokens && !slices.Equal(r.Order, last.Order) {
			c.Settled = false
		}
	}
}

// RunCompare trains (or loads) every mixer at model.width for train.steps on source, one run per seed, with the
// non-embedding parameters matched (match_params), under the primary init at train.lr (no search), and returns
// their validation and test perplexities.
func RunCompare(cfg Config, source string, opts ...run.Option) (*Comparison, error) {
	o := run.NewOptions(opts...)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newTrainer(cfg, o).compare(source, cfg.primaryInit(), nil)
}

// String formats the comparison as a text table: parameters, learning rate, the validation perplexity and, when
// measured, the test and held-back perplexities (mean ± s.e. over seeds), then the ranking's settling.
func (c *Comparison) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, width %d, %d steps, init %s, lr %s\n", c.Source, c.Width, c.Steps, c.Init, c.LRMode)
	fmt.Fprintf(&b, "%-10s %10s %12s %8s %8s %16s %16s %16s %9s\n", "mixer", "params", "non-embed", "ffn", "lr",
		"val ppl", "test ppl", "holdout ppl", "train s")
	pm := func(m, se float64, n int) string {
		if n > 1 {
			return fmt.Sprintf("%.3f±%.3f", m, se)
		}
		return fmt.Sprintf("%.3f", m)
	}
	for _, s := range c.Scores {
		if s.Seeds == 0 {
			fmt.Fprintf(&b, "%-10s diverged at lr %g in every seed\n", s.Mixer, s.LR)
			continue
		}
		test, hold := "-", "-"
		if s.Test != nil {
			test = pm(s.Test.Perplexity, s.Test.PerplexitySE, s.Seeds)
		}
		if s.Holdout != nil {
			hold = pm(s.Holdout.Perplexity, s.Holdout.PerplexitySE, s.Seeds)
		}
		fmt.Fprintf(&b, "%-10s %10d %12d %8d %8g %16s %16s %16s %9.1f", s.Mixer, s.Params, s.Match.Achieved,
			s.Match.FFNWidth, s.LR, pm(s.Perplexity, s.PerplexitySE, s.Seeds), test, hold, s.TrainSeconds)
		if s.Diverged > 0 {
			fmt.Fprintf(&b, "  (%d seed(s) diverged)", s.Diverged)
		}
		b.WriteString("\n")
	}
	if n := len(c.Ranking); n > 0 {
		fmt.Fprintf(&b, "ranking by validation loss at %d tokens: %s; settled over the last half of training: %v\n",
			c.Ranking[n-1].Tokens, strings.Join(c.Ranking[n-1].Order, " < "), c.Settled)
	}
	return b.String()
}
