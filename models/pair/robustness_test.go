package pair

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
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
