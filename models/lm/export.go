package lm

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/deltanet"
	"github.com/protolab/protolab/layers/mamba"
	"github.com/protolab/protolab/layers/prism"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// ExportFormat is the "format" metadata of an export (Model.Export); it changes when the layout does.
const ExportFormat = "protolab.export/v1"

// Metadata keys of an export (values are strings; the JSON ones are objects).
const (
	ExportMetaFormat       = "format"       // ExportFormat
	ExportMetaArchitecture = "architecture" // JSON: Architecture, every fact needed to rebuild the model
	ExportMetaConfig       = "config"       // JSON: the resolved Config of the run
	ExportMetaTensors      = "tensors"      // JSON: tensor name → ExportedTensor (its workbench variable and rule)
	ExportMetaTokenizer    = "tokenizer"    // the run's tokenizer.json (workbench/tokenizer's JSON), verbatim
	ExportMetaGit          = "git"          // the git describe of the exporting binary
)

// Orientation rules of an export (doc.go, "PyTorch export"): how a tensor relates to its workbench variable.
const (
	// OrientAsIs: stored as the workbench holds it (embeddings [V, D], gains [D], banks [R, D] or [K, D], scalars,
	// and the ProtoT projections, which the workbench already holds as [out, in]).
	OrientAsIs = "as_is"
	// OrientLinear: a projection the workbench applies as x·W with W [in, out], transposed to nn.Linear's [out, in].
	OrientLinear = "linear_out_in"
	// OrientConv: a depthwise kernel the workbench holds as [C, K], given nn.Conv1d(groups=C)'s singleton axis:
	// [C, 1, K], the last tap multiplying the current token.
	OrientConv = "conv_c1k"
)

// RoPEConvention is the pairing attention's RoPE uses (layers/attention, eq. 3): channel i with channel i + D_h/2
// of each head ("rotate half", as GPT-NeoX and Hugging Face's LLaMA). docs/spec/protot.md §9.1 writes interleaved
// pairs (2i, 2i+1); the exported q and k are NOT permuted, so an importer must rotate halves.
const RoPEConvention = "rotate_half"

// Architecture is the "architecture" metadata of an export: the model's structure with every derived value
// resolved, so that a reader rebuilds it without protolab's defaults. Only the configured mixer's section (and
// Prism for a PRISM head) is present.
type Architecture struct {
	Format        string  `json:"format"`         // ExportFormat
	Mixer         string  `json:"mixer"`          // attention, protot, deltanet or mamba (every block)
	Head          string  `json:"head"`           // dense or prism
	VocabSize     int     `json:"vocab_size"`     // V
	Width         int     `json:"width"`          // D
	NumLayers     int     `json:"num_layers"`     // L
	FFNHidden     int     `json:"ffn_hidden"`     // F, resolved; 0 with drop_ffn
	DropFFN       bool    `json:"drop_ffn"`       // blocks without the SwiGLU sub-block and its norm
	TieEmbeddings bool    `json:"tie_embeddings"` // the LM head is embed.embeddings (no lm_head tensor)
	NormEpsilon   float64 `json:"norm_epsilon"`   // ε of every RMSNorm: x/√(mean x² + ε)·g
	DType         string  `json:"dtype"`          // dtype of every tensor but the ProtoT masks (float32)
	// Block is the block equation, in words, for the reader.
	Block string `json:"block"`
	// Layers gives each block's mixer and the layer-dependent parts (ProtoT's shared routing and convolution).
	Layers    []LayerFacts      `json:"layers"`
	Attention *AttentionFacts   `json:"attention,omitempty"`
	ProtoT    *ProtoTFacts      `json:"protot,omitempty"`
	DeltaNet  *DeltaNetFacts    `json:"deltanet,omitempty"`
	Mamba     *MambaFacts       `json:"mamba,omitempty"`
	Prism     *PrismFacts       `json:"prism,omitempty"`
	Notes     map[string]string `json:"notes,omitempty"`
}

// LayerFacts is one block's mixer and layer rules.
type LayerFacts struct {
	Index         int    `json:"index"`
	Mixer         string `json:"mixer"`
	SharedRouting bool   `json:"shared_routing,omitempty"` // ProtoT: ρ = π, no read_query nor read_temp
	Conv          bool   `json:"conv,omitempty"`           // ProtoT: v ← ½v + ½·conv(v)
}

// AttentionFacts resolves layers/attention's configuration.
type AttentionFacts struct {
	NumHeads       int     `json:"num_heads"`       // H
	NumKVHeads     int     `json:"num_kv_heads"`    // H_kv (query head h reads kv head h/(H/H_kv))
	HeadDim        int     `json:"head_dim"`        // D_h
	RoPEBase       float64 `json:"rope_base"`       // θ: ω_i = θ^(−2i/D_h)
	RoPEConvention string  `json:"rope_convention"` // RoPEConvention
}

// ProtoTFacts resolves layers/protot's configuration and its fixed constants.
type ProtoTFacts struct {
	NumPrototypes int     `json:"num_prototypes"`   // R
	ValueWidth    int     `json:"value_width"`      // D_v
	ConvKernel    int     `json:"conv_kernel"`      // K
	Numerics      string  `json:"numerics"`         // exact or reference (layers/protot doc.go, "Numerics")
	TempEpsilon   float64 `json:"temp_epsilon"`     // logits / (|τ| + ε)
	MassFloor     float64 `json:"mass_floor"`       // M = num / max(den, floor)
	MaskedLogit   float64 `json:"masked_logit"`     // added where a mask entry is ≤ 0
	RefOffset     float64 `json:"reference_offset"` // reference numerics: (1−β)/(β^j + offset)
}

// DeltaNetFacts resolves layers/deltanet's configuration.
type DeltaNetFacts struct {
	NumHeads      int     `json:"num_heads"`       // H
	HeadDim       int     `json:"head_dim"`        // d = d_k = d_v
	ConvSize      int     `json:"conv_size"`       // ShortConv K
	NormEpsilon   float64 `json:"norm_epsilon"`    // per-head output RMSNorm ε
	QKNormEpsilon float64 `json:"qk_norm_epsilon"` // q, k ← x/√(‖x‖² + ε)
}

// MambaFacts resolves layers/mamba's configuration.
type MambaFacts struct {
	DInner    int `json:"d_inner"`    // d = expand·D
	StateSize int `json:"state_size"` // N
	ConvSize  int `json:"conv_size"`  // d_conv
	DTRank    int `json:"dt_rank"`    // R
}

// PrismFacts resolves layers/prism's head.
type PrismFacts struct {
	NumPrototypes   int     `json:"num_prototypes"`   // K
	TopK            int     `json:"top_k"`            // k
	ActivationScale string  `json:"activation_scale"` // cos or norm
	Eps             float64 `json:"eps"`              // cosine denominator ‖z‖·‖p‖ + ε
}

// ExportedTensor records where an exported tensor comes from.
type ExportedTensor struct {
	Variable      string `json:"variable"`       // the workbench scope path and name, "/block_00/attention/q"
	WorkbenchDims []int  `json:"workbench_dims"` // the variable's shape
	Orientation   string `json:"orientation"`    // OrientAsIs, OrientLinear or OrientConv
}

// exportRules maps a scope pattern (after the block prefix) and a variable name to its orientation. A variable
// that matches no rule is an export error, so a new weight cannot leave with an undocumented layout.
var exportRules = map[string]map[string]string{
	"embed":                          {decoder.VarEmbeddings: OrientAsIs},
	decoder.ScopeLMHead:              {decoder.VarLMHead: OrientAsIs},
	decoder.ScopeFinalNorm:           {decoder.VarGain: OrientAsIs},
	"block/" + decoder.ScopeAttnNorm: {decoder.VarGain: OrientAsIs},
	"block/" + decoder.ScopeFFNNorm:  {decoder.VarGain: OrientAsIs},
	"block/" + decoder.ScopeFFN: {decoder.VarGate: OrientLinear, decoder.VarUp: OrientLinear,
		decoder.VarDown: OrientLinear},
	"block/" + attention.Scope: {attention.VarQuery: OrientLinear, attention.VarKey: OrientLinear,
		attention.VarValue: OrientLinear, attention.VarOutput: OrientLinear},
	"block/" + protot.Scope: {protot.VarPrototypes: OrientAsIs, protot.VarValue: OrientAsIs,
		protot.VarOutput: OrientAsIs, protot.VarReadQuery: OrientAsIs, protot.VarDecayLogit: OrientAsIs,
		protot.VarWriteTemp: OrientAsIs, protot.VarReadTemp: OrientAsIs, protot.VarAlpha: OrientAsIs,
		protot.VarConv: OrientAsIs, protot.VarWriteMask: OrientAsIs, protot.VarReadMask: OrientAsIs},
	"block/" + deltanet.Scope: {deltanet.VarQuery: OrientLinear, deltanet.VarKey: OrientLinear,
		deltanet.VarValue: OrientLinear, deltanet.VarBeta: OrientLinear, deltanet.VarOutput: OrientLinear,
		deltanet.VarQueryConv: OrientConv, deltanet.VarKeyConv: OrientConv, deltanet.VarValueConv: OrientConv,
		deltanet.VarOutNorm: OrientAsIs},
	"block/" + mamba.Scope: {mamba.VarIn: OrientLinear, mamba.VarXProj: OrientLinear, mamba.VarDTProj: OrientLinear,
		mamba.VarOut: OrientLinear, mamba.VarConvKernel: OrientConv, mamba.VarConvBias: OrientAsIs,
		mamba.VarDTBias: OrientAsIs, mamba.VarALog: OrientAsIs, mamba.VarDSkip: OrientAsIs},
	prism.Scope: {prism.VarPrototypes: OrientAsIs},
}

var blockScope = regexp.MustCompile(`^/block_\d{2,}/`)

// orientation returns the rule of the variable at scope/name, or an error naming it.
func orientation(scope, name string) (string, error) {
	key := strings.TrimPrefix(scope, "/")
	if blockScope.MatchString(scope) {
		key = "block/" + blockScope.ReplaceAllString(scope, "")
	}
	if o, ok := exportRules[key][name]; ok {
		return o, nil
	}
	return "", errors.Errorf("variable %s/%s has no export rule (models/lm/export.go exportRules)", scope, name)
}

// reorient returns t laid out by rule o: OrientLinear transposes a matrix, OrientConv reshapes [C, K] to [C, 1, K].
func reorient(t *tensors.Tensor, o string) (*tensors.Tensor, error) {
	s := t.Shape()
	switch o {
	case OrientAsIs:
		return t, nil
	case OrientConv:
		if s.Rank() != 2 {
			return nil, errors.Errorf("want a [C, K] kernel, got %s", s)
		}
		out := tensors.FromShape(shapes.Make(s.DType, s.Dim(0), 1, s.Dim(1)))
		return out, copyBytes(t, out, func(dst, src []byte) { copy(dst, src) })
	case OrientLinear:
		if s.Rank() != 2 {
			return nil, errors.Errorf("want a [in, out] matrix, got %s", s)
		}
		r, c, size := s.Dim(0), s.Dim(1), s.DType.Size()
		out := tensors.FromShape(shapes.Make(s.DType, c, r))
		return out, copyBytes(t, out, func(dst, src []byte) {
			for i := 0; i < r; i++ {
				for j := 0; j < c; j++ {
					copy(dst[(j*r+i)*size:(j*r+i+1)*size], src[(i*c+j)*size:(i*c+j+1)*size])
				}
			}
		})
	}
	return nil, errors.Errorf("unknown orientation %q", o)
}

// copyBytes calls f with the bytes of dst and src.
func copyBytes(src, dst *tensors.Tensor, f func(dst, src []byte)) error {
	var inner error
	err := src.ConstBytes(func(s []byte) {
		inner = dst.MutableBytes(func(d []byte) { f(d, s) })
	})
	if err != nil {
		return err
	}
	return inner
}

// ArchitectureOf returns the export's architecture facts of a resolved, valid config.
func ArchitectureOf(c Config) Architecture {
	c = c.Resolved()
	mc := c.Model
	a := Architecture{
		Format: ExportFormat, Mixer: mc.Mixer, Head: c.Head, VocabSize: mc.VocabSize, Width: mc.Width,
		NumLayers: mc.NumLayers, DropFFN: mc.DropFFN, TieEmbeddings: mc.TieEmbeddings, NormEpsilon: mc.NormEpsilon,
		DType: mc.DType,
		Block: "h += mixer(rmsnorm(h, attn_norm)); h += ffn.down(silu(ffn.gate(u)) * ffn.up(u)), " +
			"u = rmsnorm(h, ffn_norm); logits = rmsnorm(h_L, final_norm) · Wᵀ, W = lm_head.weights or " +
			"embed.embeddings when tied (layers/decoder doc.go, eqs. 1–6); no biases, no positional embedding " +
			"besides attention's RoPE",
	}
	if !mc.DropFFN {
		a.FFNHidden = mc.FFNWidth()
	}
	for l := 0; l < mc.NumLayers; l++ {
		lf := LayerFacts{Index: l, Mixer: mc.Mixer}
		if mc.Mixer == decoder.MixerProtoT {
			lf.SharedRouting, lf.Conv = mc.ProtoT.SharedRouting(l), mc.ProtoT.HasConv(l)
		}
		a.Layers = append(a.Layers, lf)
	}
	D := mc.Width
	switch mc.Mixer {
	case decoder.MixerAttention:
		ac := mc.Attention
		a.Attention = &AttentionFacts{NumHeads: ac.NumHeads, NumKVHeads: ac.KVHeads(), HeadDim: ac.HeadSize(D),
			RoPEBase: ac.RoPEBase, RoPEConvention: RoPEConvention}
		a.Notes = map[string]string{"rope": "RoPE pairs channel i with channel i + head_dim/2 of each head " +
			"(rotate-half, as GPT-NeoX and Hugging Face LLaMA); docs/spec/protot.md §9.1 writes interleaved pairs " +
			"(2i, 2i+1), the same model up to a permutation of each head's q and k channels, which this export " +
			"does not apply. Positions start at 0; angle = position·θ^(−2i/head_dim)."}
	case decoder.MixerProtoT:
		pc := mc.ProtoT
		a.ProtoT = &ProtoTFacts{NumPrototypes: pc.NumPrototypes, ValueWidth: pc.Dv(D), ConvKernel: pc.ConvKernel,
			Numerics: pc.Numerics, TempEpsilon: protot.TempEpsilon, MassFloor: protot.MassFloor,
			MaskedLogit: protot.MaskedLogit, RefOffset: protot.ReferenceOffset}
		a.Notes = map[string]string{"masks": "write_mask and read_mask [R] are float32 intervention masks: an " +
			"entry ≤ 0 adds masked_logit to that prototype's logit before the softmax; in shared-routing layers " +
			"the read softmax uses write logit + both masks' biases"}
	case decoder.MixerDeltaNet:
		dc := mc.DeltaNet
		a.DeltaNet = &DeltaNetFacts{NumHeads: dc.NumHeads, HeadDim: dc.HeadSize(D), ConvSize: dc.ConvSize,
			NormEpsilon: dc.NormEpsilon, QKNormEpsilon: deltanet.QKNormEpsilon}
	case decoder.MixerMamba:
		mm := mc.Mamba
		a.Mamba = &MambaFacts{DInner: mm.Inner(D), StateSize: mm.StateSize, ConvSize: mm.ConvSize,
			DTRank: mm.Rank(D)}
	}
	if c.Head == HeadPrism {
		p := c.Prism.Config
		a.Prism = &PrismFacts{NumPrototypes: p.NumPrototypes, TopK: p.TopK, ActivationScale: p.ActivationScale,
			Eps: prism.Eps}
	}
	return a
}

// Export writes the model's weights to path (atomically) in the PyTorch-oriented layout of doc.go ("PyTorch
// export"): every model weight under its workbench name, oriented by its rule (exportRules), ProtoT's intervention
// masks included (all ones when never set), and the metadata ExportMeta*: the architecture, the resolved config,
// the tensor table and the tokenizer. A variable without a rule is an error naming it.
func (m *Model) Export(path string) error {
	out := map[string]*tensors.Tensor{}
	table := map[string]ExportedTensor{}
	for v := range m.Store.IterVariables() {
		if inOptimizer(v) || (!v.Trainable && !isMask(v.Name())) {
			continue
		}
		if err := exportVariable(v, out, table); err != nil {
			return errors.WithMessagef(err, "lm.Model.Export %s", path)
		}
	}
	m.addMissingMasks(out, table)
	arch := ArchitectureOf(m.Config)
	meta := map[string]string{ExportMetaFormat: ExportFormat, ExportMetaGit: run.GitDescribe()}
	for key, v := range map[string]any{ExportMetaArchitecture: arch, ExportMetaConfig: m.Config.Resolved(),
		ExportMetaTensors: table} {
		b, jerr := json.Marshal(v)
		if jerr != nil {
			return errors.Wrapf(jerr, "lm.Model.Export %s: encoding %s", path, key)
		}
		meta[key] = string(b)
	}
	if m.Tokenizer != nil {
		b, terr := m.Tokenizer.MarshalJSON()
		if terr != nil {
			return errors.Wrapf(terr, "lm.Model.Export %s: encoding the tokenizer", path)
		}
		meta[ExportMetaTokenizer] = string(b)
	}
	if err := store.Save(path, out, meta); err != nil {
		return errors.WithMessage(err, "lm.Model.Export")
	}
	return nil
}

// exportVariable adds v, reoriented by its rule, to out and its record to table.
func exportVariable(v *model.Variable, out map[string]*tensors.Tensor, table map[string]ExportedTensor) error {
	name, err := store.Name(v.Scope(), v.Name())
	if err != nil {
		return err
	}
	o, err := orientation(v.Scope(), v.Name())
	if err != nil {
		return err
	}
	value, err := v.Value()
	if err != nil {
		return errors.Wrapf(err, "variable %s", v.Path())
	}
	t, err := reorient(value, o)
	if err != nil {
		return errors.WithMessagef(err, "variable %s", v.Path())
	}
	out[name] = t
	table[name] = ExportedTensor{Variable: v.Path(), WorkbenchDims: value.Shape().Dimensions, Orientation: o}
	return nil
}

func isMask(name string) bool { return name == protot.VarWriteMask || name == protot.VarReadMask }

// addMissingMasks adds all-ones ProtoT masks for the layers whose mask variables were never created (a context
// loaded from weights.safetensors holds them only once a graph has been built), so that every ProtoT export
// carries them.
func (m *Model) addMissingMasks(out map[string]*tensors.Tensor, table map[string]ExportedTensor) {
	mc := m.Config.Model
	if mc.Mixer != decoder.MixerProtoT {
		return
	}
	R := mc.ProtoT.NumPrototypes
	for l := 0; l < mc.NumLayers; l++ {
		for _, v := range []string{protot.VarWriteMask, protot.VarReadMask} {
			scope := fmt.Sprintf("/%s/%s", decoder.BlockScope(l), protot.Scope)
			name, _ := store.Name(scope, v)
			if _, ok := out[name]; ok {
				continue
			}
			ones := make([]float32, R)
			for i := range ones {
				ones[i] = 1
			}
			out[name] = tensors.FromValue(ones)
			table[name] = ExportedTensor{Variable: scope + "/" + v, WorkbenchDims: []int{R}, Orientation: OrientAsIs}
		}
	}
}
