package main

import (
	"bytes"
	"flag"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAttribute_TinyQuery trains the Tiny PRISM model once into a temporary folder, then ranks the training
// sequences for one query with the cached method and with EK-FAC; the second call reuses the trained model and the
// attribution cache.
func TestAttribute_TinyQuery(t *testing.T) {
	out := t.TempDir()
	line := regexp.MustCompile(`(?m)^\s+\d+\. seq \d+\s+[+-]\d\.\d{4}e[+-]\d+  ".*"$`)
	for _, method := range []string{"prism", "ekfac"} {
		var buf bytes.Buffer
		require.NoError(t, dispatch([]string{"attribute", "--preset", "tiny", "--out", out, "--query",
			"the king of the north|said that the queen was away", "--method", method, "--top", "4"}, &buf))
		text := buf.String()
		require.Contains(t, text, "method "+method)
		require.Len(t, line.FindAllString(text, -1), 4, "four ranked sequences:\n%s", text)
		// Scores are printed highest first.
		prev := math.Inf(1)
		for _, l := range line.FindAllString(text, -1) {
			s, err := strconv.ParseFloat(strings.Fields(l)[3], 64)
			require.NoError(t, err)
			require.LessOrEqual(t, s, prev, text)
			prev = s
		}
	}
	var buf bytes.Buffer
	require.ErrorContains(t, dispatch([]string{"attribute", "--preset", "tiny", "--out", out, "--query", "the king",
		"--method", "tracin"}, &buf), `unknown method "tracin"`)

	// A query longer than the model's window is cut to its last tokens, and the output says so first.
	long := strings.Repeat("the king of the north went home. ", 40)
	buf.Reset()
	require.NoError(t, dispatch([]string{"attribute", "--preset", "tiny", "--out", out, "--query", long, "--top", "2"},
		&buf))
	note := regexp.MustCompile(`^note: the query has (\d+) tokens, more than the model reads \(data.seq_len\+1 = ` +
		`(\d+)\): only its last (\d+) tokens are read, the first (\d+) are dropped\n`).FindStringSubmatch(buf.String())
	require.NotNil(t, note, buf.String())
	n, _ := strconv.Atoi(note[1])
	window, _ := strconv.Atoi(note[2])
	dropped, _ := strconv.Atoi(note[4])
	require.Greater(t, n, window)
	require.Equal(t, note[2], note[3])
	require.Equal(t, n-window, dropped)
	buf.Reset()
	require.NoError(t, dispatch([]string{"attribute", "--preset", "tiny", "--out", out, "--query", "the king|went",
		"--top", "2"}, &buf))
	require.NotContains(t, buf.String(), "note:", "a short query is not cut")
}

func TestAttribute_Errors(t *testing.T) {
	var buf bytes.Buffer
	require.ErrorIs(t, dispatch([]string{"attribute", "--help"}, &buf), flag.ErrHelp)
	require.Contains(t, buf.String(), "--query")
	require.Contains(t, buf.String(), "ekfac")
	require.ErrorContains(t, dispatch([]string{"attribute"}, &buf), "--query TEXT or --compare")
	require.ErrorContains(t, dispatch([]string{"attribute", "--query", "x", "--top", "0"}, &buf), "--top=0")
	require.ErrorContains(t, dispatch([]string{"attribute", "--query", "x", "--preset", "huge"}, &buf), "huge")
	require.ErrorContains(t, dispatch([]string{"attribute", "--query", "x", "--preset", "tiny", "--set",
		"attribution.nope=1"}, &buf), "nope")
	require.ErrorContains(t, dispatch([]string{"attribute", "--query", "x", "extra"}, &buf), "unexpected")
}
