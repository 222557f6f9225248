package pair

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
	"github.com/protolab/protolab/workbench/data/brown"
	"github.com/protolab/protolab/workbench/data/brown/browntest"
	"github.com/protolab/protolab/workbench/lmdata"
	"github.com/protolab/protolab/workbench/run"
)

// TestPrompts_EndBeforeLastWord: every prompt is a prefix of a validation document that stops just before the
// last word of one of its sentences, and fits the token limit with the EOS in front.
func TestPrompts_EndBeforeLastWord(t *testing.T) {
	dc := Tiny().Data
	dc.Source = lmdata.SourceSynthetic
	prep, err := lmdata.Prepare(dc, "")
	require.NoError(t, err)
	ps := Prompts(prep, 10, 20, run.RNG(1, "interp/prompts"))
	require.Len(t, ps, 10)
	for _, p := range ps {
		require.LessOrEqual(t, 1+len(prep.Tokenizer.Encode(p)), 20)
		found := false
		for d, text := range prep.Val.Texts {
			if !strings.HasPrefix(text, p) {
				continue
			}
			for _, s := range prep.Val.Labels[d].Sentences {
				ws := data.LetterWords(text[s.Start:s.End])
				if len(ws) >= 3 && int(s.Start)+ws[len(ws)-2].End == len(p) {
					found = true
				}
			}
		}
		require.True(t, found, "%q ends before the last word of a sentence", p)
	}
	require.Equal(t, ps, Prompts(prep, 10, 20, run.RNG(1, "interp/prompts")), "seeded")
}

// TestSentencePrompts_SeveralPerDocument: on the Brown test split (a fixture shaped like the installed corpus),
// every prompt runs from the start of one of a document's sentences to just before that sentence's last word and
// fits the token limit; a document gives several, so there are more prompts than documents; the draw is seeded.
func TestSentencePrompts_SeveralPerDocument(t *testing.T) {
	t.Setenv(brown.EnvDir, browntest.Dir(t))
	dc := Tiny().Data
	dc.Source = lmdata.SourceBrown
	prep, err := lmdata.Prepare(dc, "")
	require.NoError(t, err)
	test, err := lmdata.EvalCorpus(dc, brown.Test)
	require.NoError(t, err)
	n := 3 * len(test.Texts)
	ps := SentencePrompts(test, prep.Tokenizer, n, 20, run.RNG(1, "interp/prompts"))
	require.Len(t, ps, n)
	for _, p := range ps {
		require.LessOrEqual(t, 1+len(prep.Tokenizer.Encode(p)), 20)
		found := false
		for d, text := range test.Texts {
			for _, s := range test.Labels[d].Sentences {
				ws := data.LetterWords(text[s.Start:s.End])
				if len(ws) >= 3 && text[s.Start:int(s.Start)+ws[len(ws)-2].End] == p {
					found = true
				}
			}
		}
		require.True(t, found, "%q runs from a sentence's start to just before its last word", p)
	}
	require.Contains(t, ps, "Scotty did not go back to", "a sentence inside a document")
	require.Equal(t, ps, SentencePrompts(test, prep.Tokenizer, n, 20, run.RNG(1, "interp/prompts")), "seeded")
	require.Empty(t, SentencePrompts(test, prep.Tokenizer, n, 3, run.RNG(1, "interp/prompts")), "none fits 2 tokens")
}
