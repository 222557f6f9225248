package influence

import (
	"math"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/stats"
)

// LDS returns the linear datamodeling score: for each query q, the Spearman correlation over the M subsets between
// the predicted Σ_{s∈subset m} scores[q][s] and −losses[m][q] (the negated query loss of the model retrained on
// subset m; minus because positive influence means helpful), and their mean over queries (NaNs skipped).
// subsets[m] lists training-sequence indices. It fails on inconsistent sizes or fewer than 3 subsets.
func LDS(scores [][]float64, subsets [][]int, losses [][]float64) (meanLDS float64, perQuery []float64, err error) {
	M := len(subsets)
	if M < 3 || len(losses) != M {
		return math.NaN(), nil, errors.Errorf("influence.LDS: %d subsets and %d loss rows; want equal and ≥ 3", M, len(losses))
	}
	perQuery = make([]float64, len(scores))
	for q, sc := range scores {
		pred, actual := make([]float64, M), make([]float64, M)
		for m, sub := range subsets {
			if len(losses[m]) != len(scores) {
				return math.NaN(), nil, errors.Errorf("influence.LDS: loss row %d has %d queries, want %d", m, len(losses[m]), len(scores))
			}
			for _, s := range sub {
				if s < 0 || s >= len(sc) {
					return math.NaN(), nil, errors.Errorf("influence.LDS: subset %d names sequence %d outside [0, %d)", m, s, len(sc))
				}
				pred[m] += sc[s]
			}
			actual[m] = -losses[m][q]
		}
		perQuery[q] = stats.Spearman(pred, actual)
	}
	meanLDS, _, _ = stats.MeanCI(perQuery, 0.95, 0, 0)
	return meanLDS, perQuery, nil
}
