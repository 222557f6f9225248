package robustness

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/models/pair"
	"github.com/protolab/protolab/workbench/naming"
)

// StatsTable prints a Jensen–Shannon divergence of ~1e-6 with its digits, not as 0.000 ± 0.000 (the chart beside
// it plots 1e-6).
func TestStatsTable_TinyJSKeepsItsDigits(t *testing.T) {
	res := &Result{Corpora: []*CorpusResult{{Source: "synthetic", Robustness: pair.Robustness{Kinds: []string{"swap"},
		Comparisons: []pair.ModelStats{{Mixer: "protot", ByKind: []pair.Stats{{Kind: "swap", Pairs: 12,
			JS: naming.MeanSD{Mean: 1.234e-6, SD: 5.6e-7, N: 12}, Overlap: naming.MeanSD{Mean: 0.9, SD: 0.05,
				N: 12}}}}}}}}}
	s := StatsTable(res, "synthetic").String()
	require.Contains(t, s, "1.23e-06 ± 5.6e-07")
	require.Contains(t, s, "0.9 ± 0.05")
	require.False(t, strings.Contains(s, "0.000 ± 0.000"), s)
}
