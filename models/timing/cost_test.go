package timing

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/theory/cost"
)

// costConfigs returns decoder configurations that exercise every zero-value rule and form of the four mixers:
// the defaults, odd sizes, grouped-query attention, explicit head and value widths, ProtoT's dense, chunked and
// auto forms with other shared-routing and convolution layer counts, and DropFFN with an explicit F.
func costConfigs() []decoder.Config {
	var out []decoder.Config
	for _, mixer := range decoder.KnownMixers {
		base := decoder.DefaultConfig()
		base.Mixer = mixer
		out = append(out, base)

		odd := base
		odd.VocabSize, odd.Width, odd.NumLayers, odd.FFNHidden = 97, 96, 3, 200
		odd.Attention.NumHeads, odd.Attention.NumKVHeads = 6, 2
		odd.ProtoT.NumPrototypes, odd.ProtoT.ValueWidth, odd.ProtoT.ChunkSize = 5, 40, 8
		odd.ProtoT.SharedRoutingLayers, odd.ProtoT.ConvLayers, odd.ProtoT.ConvKernel = 0, 3, 3
		odd.ProtoT.Form = protot.FormChunked
		odd.DeltaNet.NumHeads, odd.DeltaNet.HeadDim, odd.DeltaNet.ChunkSize = 3, 20, 16
		odd.Mamba.Expand, odd.Mamba.StateSize, odd.Mamba.DTRank, odd.Mamba.ConvSize = 3, 5, 7, 2
		out = append(out, odd)

		other := base
		other.Width, other.NumLayers, other.DropFFN = 64, 2, true
		other.Attention.HeadDim = 10
		other.ProtoT.Form, other.ProtoT.SharedRoutingLayers = protot.FormDense, 2
		other.DeltaNet.ChunkSize = 1
		other.Mamba.ChunkSize = 5
		out = append(out, other)
	}
	chunked := decoder.DefaultConfig() // attention in blocks of 48 from T = 64 on (auto), and always in blocks of 7
	chunked.Attention.BlockSize, chunked.Attention.ChunkedMinLen = 48, 64
	always := chunked
	always.Attention.Kind, always.Attention.BlockSize = attention.KindChunked, 7
	return append(out, chunked, always)
}

// TestCostModel_MatchesLayerFLOPsAndStates checks that theory/cost, written separately from the layers, gives
// the layers' matrix-product counts (per mixer layer and for the whole decoder) and decoding-state sizes, at
// sequence lengths below, at and above the chunk lengths. The counts are equal except for one documented term:
// theory/cost adds ProtoT's chunk carry (cost.ProtoT.Carry), which layers/protot's FLOPsPerToken leaves out.
// The elementwise counts have no layer counterpart.
func TestCostModel_MatchesLayerFLOPsAndStates(t *testing.T) {
	for _, m := range costConfigs() {
		require.NoError(t, m.Validate())
		cm, err := CostModel(m)
		require.NoError(t, err)
		for _, T := range []int{1, 5, 8, 16, 63, 64, 65, 100, 256, 1000, 8192} {
			carry := 0.0
			if p, ok := cm.Mixer.(cost.ProtoT); ok {
				carry = p.Carry(T)
			}
			if T > 64 && m.Mixer == decoder.MixerProtoT && m.ProtoT.Form != protot.FormDense {
				require.Positive(t, carry, "T=%d: more than one chunk", T)
			}
			want := decoder.FLOPsPerToken(m, T) + float64(m.NumLayers)*carry
			require.InDelta(t, want, cm.Forward(T).MatMul, 1e-12*want, "%s D=%d T=%d", m.Mixer, m.Width, T)
			for l := 0; l < m.NumLayers; l++ {
				mixer, err := decoder.NewMixer(m, l)
				require.NoError(t, err)
				want := mixer.FLOPsPerToken(T) + carry
				require.InDelta(t, want, cm.Mixer.Forward(l, T).MatMul, 1e-12*want, "%s layer %d T=%d", m.Mixer, l, T)
			}
		}
		for _, capacity := range []int{1, 7, 300} {
			n := 0
			for _, s := range decoder.StateShapes(m, 3, capacity) {
				n += s.Size()
			}
			require.Equal(t, n, 3*cm.StateFloats(capacity), "%s capacity %d", m.Mixer, capacity)
		}
	}
	_, err := CostModel(decoder.Config{})
	require.Error(t, err)
}
