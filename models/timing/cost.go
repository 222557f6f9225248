package timing

import (
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/theory/cost"
)

// CostModel returns theory/cost's model of a decoder configuration: the same sizes, with theory/cost's own
// resolution of the zero values. Returns an error for an invalid configuration or a mixer theory/cost does not
// model.
func CostModel(m decoder.Config) (cost.Model, error) {
	if err := m.Validate(); err != nil {
		return cost.Model{}, err
	}
	cm := cost.Model{Vocab: m.VocabSize, Width: m.Width, Layers: m.NumLayers, FFN: m.FFNHidden, DropFFN: m.DropFFN}
	D := m.Width
	switch m.Mixer {
	case decoder.MixerAttention:
		a := m.Attention
		ca := cost.Attention{Width: D, Heads: a.NumHeads, KVHeads: a.NumKVHeads, HeadDim: a.HeadDim}
		switch {
		case a.Chunked(1): // chunked at every length
			ca.Block = a.Block()
		case a.Kind != attention.KindFull: // auto: chunked from the threshold on
			ca.Block, ca.ChunkedMinLen = a.Block(), a.ChunkThreshold()
		}
		cm.Mixer = ca
	case decoder.MixerProtoT:
		p := m.ProtoT
		dense := 0
		if p.Form == protot.FormAuto {
			dense = p.DenseMaxLen
		}
		cm.Mixer = cost.ProtoT{Width: D, Prototypes: p.NumPrototypes, ValueWidth: p.ValueWidth, Chunk: p.ChunkSize,
			DenseMaxLen: dense, Dense: p.Form == protot.FormDense, SharedRoutingLayers: p.SharedRoutingLayers,
			ConvLayers: p.ConvLayers, ConvKernel: p.ConvKernel}
	case decoder.MixerDeltaNet:
		d := m.DeltaNet
		cm.Mixer = cost.DeltaNet{Width: D, Heads: d.NumHeads, HeadDim: d.HeadDim, Chunk: d.ChunkSize,
			ConvSize: d.ConvSize}
	case decoder.MixerMamba:
		b := m.Mamba
		cm.Mixer = cost.Mamba{Width: D, Expand: b.Expand, StateSize: b.StateSize, DTRank: b.DTRank,
			ConvSize: b.ConvSize}
	default:
		return cost.Model{}, errors.Errorf("mixer=%q has no cost model", m.Mixer)
	}
	return cm, nil
}

// TrainBytes estimates the peak memory of a training step in bytes, for the skip rule: four copies of the
// parameters (weights, gradients, two AdamW moments), and the activations per token (4·V for the logits and, per
// layer, 24·D + 10·F for the block plus the mixer's own): attention keeps 8·D per token and 6 floats per score
// (b, h, t, s) of every layer in the full form, chunkedScoreFloats per (b, h, t) and block position in the chunked
// form; ProtoT 8·D + 8·R·Q; DeltaNet 90·D + 3.5·(T/C)·H·d (its chunk loop's slices grow with
// the number of chunks); Mamba 6·d_in + 12·d_in·N. The constants were fitted to the peak RSS of Small runs on
// the pure-Go backend (attention about 24 bytes per score element); they err on the high side.
func TrainBytes(m decoder.Config, B, T int) float64 {
	f := float64(m.DTypeOf().Size())
	D, F, V, L := float64(m.Width), float64(m.FFNWidth()), float64(m.VocabSize), float64(m.NumLayers)
	perLayer := 24*D + 10*F
	extra := 0.0
	switch m.Mixer {
	case decoder.MixerAttention:
		perLayer += 8 * D
		rows := L * float64(B) * float64(m.Attention.NumHeads) * float64(T) * f // (layer, b, h, t), in bytes
		if m.Attention.Chunked(T) {
			extra = rows * float64(m.Attention.Block()) * chunkedScoreFloats
		} else {
			extra = rows * float64(T) * 6
		}
	case decoder.MixerProtoT:
		perLayer += 8*D + 8*float64(m.ProtoT.NumPrototypes)*float64(m.ProtoT.ChunkLen(T))
	case decoder.MixerDeltaNet:
		hd := float64(m.DeltaNet.NumHeads * m.DeltaNet.HeadSize(m.Width))
		chunks := float64((T + m.DeltaNet.ChunkSize - 1) / m.DeltaNet.ChunkSize)
		perLayer += 90*D + 3.5*chunks*hd
	case decoder.MixerMamba:
		d, N := float64(m.Mamba.Inner(m.Width)), float64(m.Mamba.StateSize)
		perLayer += 6*d + 12*d*N
	}
	params := 4 * float64(m.NumParams()) * f
	return params + float64(B*T)*(L*perLayer+4*V)*f + extra
}

// chunkedScoreFloats is the floats per (b, h, t) and block position of chunked attention's training peak in
// TrainBytes: about T/C query blocks of C² scores live at once per layer, a few tensors each. Fitted like the other
// constants, to the peak RSS of a single attention layer with C = 256 (BenchmarkMixer_ForwardBackward in
// layers/attention) at the Small contexts, and rounded up so that it errs on the high side; each row stores its
// estimate beside its measured peak (estimated_mb, peak_mb).
const chunkedScoreFloats = 20
