package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/docs"
)

// TestReport_EveryClaimHasARow writes the scorecard of an empty results folder: every scored study's claims appear
// as "not run", every paper id they name exists in docs/spec/papers.md, and both files are written.
func TestReport_EveryClaimHasARow(t *testing.T) {
	out := t.TempDir()
	md := filepath.Join(out, "REPORT.md")
	var buf bytes.Buffer
	require.NoError(t, dispatch([]string{"report", "--out", filepath.Join(out, "runs"), "--shipped", "", "--md", md},
		&buf))
	text, err := os.ReadFile(md)
	require.NoError(t, err)
	page, err := os.ReadFile(filepath.Join(out, "REPORT.html"))
	require.NoError(t, err)
	require.Contains(t, string(page), "<table>")
	rows, err := scorecardRows(filepath.Join(out, "runs"), "")
	require.NoError(t, err)
	for _, r := range rows {
		require.Equal(t, "not run", r.Verdict, r.Claim.Claim)
		if r.Claim.ID != "" {
			_, err := docs.Paper(r.Claim.ID)
			require.NoError(t, err)
		}
		require.Contains(t, string(text), r.Claim.Claim[:min(20, len(r.Claim.Claim))])
	}
	require.True(t, strings.Contains(buf.String(), "claims: "), "the summary line is printed")
	require.Contains(t, buf.String(), "wrote "+md)
}
