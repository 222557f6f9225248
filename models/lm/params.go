package lm

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
)

// ParamMatch reports how a model's non-embedding parameter count was matched to the reference mixer's.
type ParamMatch struct {
	Reference         string `json:"reference"`           // the reference mixer
	Target            int    `json:"target"`              // the reference model's non-embedding parameters
	Achieved          int    `json:"achieved"`            // this model's non-embedding parameters
	FFNWidth          int    `json:"ffn_width"`           // this model's FFN width F
	ReferenceFFNWidth int    `json:"reference_ffn_width"` // the reference model's F
}

// RelativeError returns (Achieved − Target)/Target.
func (p ParamMatch) RelativeError() float64 {
	return float64(p.Achieved-p.Target) / float64(p.Target)
}

// NonEmbeddingParams returns the trainable parameters of a decoder minus its token embedding and untied LM head
// (V·D each): the mixers, norms and FFNs. Panics if cfg is invalid.
func NonEmbeddingParams(cfg decoder.Config) int {
	n := cfg.NumParams() - cfg.VocabSize*cfg.Width
	if !cfg.TieEmbeddings {
		n -= cfg.VocabSize * cfg.Width
	}
	return n
}

// MatchTolerance returns the largest |achieved − target| MatchParams can leave for a model: half the parameters of
// one FFN unit in every block, 3·D·L/2, because F is an integer and each unit of F adds 3·D parameters per block.
func MatchTolerance(cfg decoder.Config) int { return 3 * cfg.Width * cfg.NumLayers / 2 }

// MatchParams returns ref with its mixer replaced by mixer and its FFN width F chosen so that the non-embedding
// parameter count is as close as possible to ref's (doc.go, "Equal parameter count"):
//
//	F = round((P_ref − P_0) / (3·D·L)),   P_0 = the count of the new model without FFN weights,
//
// which leaves |P − P_ref| ≤ MatchTolerance. Width, depth, vocabulary and embeddings stay as in ref, so total
// counts match too. It returns an error when ref is invalid, when ref drops the FFN (nothing to resize) or when the
// mixer alone already exceeds the target (F would be < 1).
func MatchParams(ref decoder.Config, mixer string) (decoder.Config, ParamMatch, error) {
	if err := ref.Validate(); err != nil {
		return ref, ParamMatch{}, errors.WithMessage(err, "lm.MatchParams: reference model")
	}
	if ref.DropFFN {
		return ref, ParamMatch{}, errors.New("lm.MatchParams: the reference has drop_ffn set, so there is no " +
			"FFN to resize; set match_params=false")
	}
	target := NonEmbeddingParams(ref)
	m := ref
	m.Mixer = mixer
	m.FFNHidden = 1
	if err := m.Validate(); err != nil {
		return m, ParamMatch{}, errors.WithMessagef(err, "lm.MatchParams: mixer %s at width %d", mixer, ref.Width)
	}
	unit := 3 * m.Width * m.NumLayers // parameters per unit of F
	base := NonEmbeddingParams(m) - unit
	f := (2*(target-base) + unit) / (2 * unit) // round((target-base)/unit), for target > base
	if target-base <= 0 || f < 1 {
		return m, ParamMatch{}, errors.Errorf("lm.MatchParams: mixer %s at width %d has %d non-embedding "+
			"parameters without an FFN, not below the %s target %d; match_params cannot apply", mixer, ref.Width,
			base, ref.Mixer, target)
	}
	m.FFNHidden = f
	return m, ParamMatch{Reference: ref.Mixer, Target: target, Achieved: NonEmbeddingParams(m), FFNWidth: f,
		ReferenceFFNWidth: ref.FFNWidth()}, nil
}
