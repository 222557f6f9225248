package lm

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/layers/protot"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/store"
)

// exportCase is a Tiny model exported in TestExport_PyTorchReproducesLogits: two layers (so ProtoT has a
// shared-routing and a reading layer, a convolution layer and one without), a few updates.
type exportCase struct {
	name string
	cfg  Config
	// writeMask, when set, is ProtoT layer 1's write mask (an intervention the export must carry).
	writeMask []float64
}

func exportCases() []exportCase {
	base := func(mixer string) Config {
		c := tinyConfig()
		c.Model.Mixer, c.Model.NumLayers = mixer, 2
		c.Train.Steps, c.Train.EvalEvery, c.Train.CheckpointEvery, c.EvalBatches = 20, 0, 0, 1
		return c
	}
	pt := base(decoder.MixerProtoT)
	pt.Model.ProtoT.NumPrototypes, pt.Model.ProtoT.ConvLayers = 5, 1
	pt.Model.TieEmbeddings = false
	ref := base(decoder.MixerProtoT)
	ref.Model.ProtoT.NumPrototypes, ref.Model.ProtoT.Numerics = 4, protot.NumericsReference
	ref.Model.DropFFN = true
	dn := base(decoder.MixerDeltaNet)
	dn.Model.DeltaNet.NumHeads, dn.Model.DeltaNet.ChunkSize = 2, 4 // several chunks over T = 12
	mb := base(decoder.MixerMamba)
	mb.Model.Mamba.StateSize, mb.Model.Mamba.ChunkSize = 4, 5
	mb.Model.DType = "float64" // the export and the PyTorch model keep the dtype
	pr := tinyPrism()
	pr.Model.NumLayers, pr.Train.Steps, pr.Train.EvalEvery, pr.Train.CheckpointEvery = 1, 20, 0, 0
	pr.Prism.ProtoWarmup, pr.EvalBatches = 4, 1
	at := base(decoder.MixerAttention)
	at.Model.Attention.NumKVHeads, at.Model.Attention.RoPEBase = 1, 10_000 // grouped-query attention
	return []exportCase{
		{name: "attention_gqa", cfg: at},
		{name: "protot", cfg: pt, writeMask: []float64{1, 0, 1, 1, 0}},
		{name: "protot_reference_noffn", cfg: ref},
		{name: "deltanet", cfg: dn},
		{name: "mamba", cfg: mb},
		{name: "attention_prism", cfg: pr},
	}
}

// exportTokens is the fixed token sequence whose logits are compared: 2 rows of T = 12.
var exportTokens = [][]int32{{0, 5, 17, 3, 99, 42, 7, 7, 250, 1, 64, 12}, {299, 2, 8, 150, 33, 33, 9, 120, 4, 77, 5, 6}}

// trainExportCase trains c in a temporary run folder and applies its mask.
func trainExportCase(t *testing.T, c exportCase) *Model {
	t.Helper()
	m, err := Train(c.cfg, filepath.Join(t.TempDir(), c.name), run.Progress(nil))
	require.NoError(t, err)
	if c.writeMask != nil {
		require.NoError(t, protot.SetMasks(m.Store.Scope(decoder.BlockScope(1)), m.Config.Model.ProtoT, 1, c.writeMask, nil))
	}
	return m
}

// workbenchLogits returns the model's logits for exportTokens as float64 [B][T][V].
func workbenchLogits(t *testing.T, m *Model) [][][]float64 {
	return workbenchOutput(t, m, m.Logits, m.Config.Model.VocabSize)
}

// workbenchReconstruction returns a PRISM model's reconstruction ẑ for exportTokens as float64 [B][T][D].
func workbenchReconstruction(t *testing.T, m *Model) [][][]float64 {
	return workbenchOutput(t, m, func(scope *model.Scope, tokens *Node) *Node {
		return decoder.PrismHead(scope, m.Config.Model, m.Config.Prism.Config, tokens).Reconstruction
	}, m.Config.Model.Width)
}

// workbenchOutput runs f on exportTokens and returns its [B, T, V] result as float64 [B][T][V].
func workbenchOutput(t *testing.T, m *Model, f func(*model.Scope, *Node) *Node, V int) [][][]float64 {
	t.Helper()
	e, err := model.NewExec(m.Backend, m.Store, func(scope *model.Scope, tokens *Node) *Node {
		return ConvertDType(f(scope, tokens), dtypes.Float64)
	})
	require.NoError(t, err)
	out, err := e.Exec(exportTokens)
	require.NoError(t, err)
	flat := tensors.MustCopyFlatData[float64](out[0])
	B, T := len(exportTokens), len(exportTokens[0])
	require.Len(t, flat, B*T*V)
	logits := make([][][]float64, B)
	for b := range logits {
		logits[b] = make([][]float64, T)
		for i := range logits[b] {
			logits[b][i] = make([]float64, V)
			for v := range logits[b][i] {
				logits[b][i][v] = flat[(b*T+i)*V+v]
			}
		}
	}
	return logits
}

// torchPython returns the python3 that imports torch, or skips the test saying why.
func torchPython(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if _, serr := os.Stat("/usr/bin/python3"); serr == nil {
		py, err = "/usr/bin/python3", nil // Debian's python3-torch lives there, not in a pyenv shim
	}
	if err != nil {
		t.Skip("python3 is not installed: the PyTorch parity check needs python3 with torch (Debian: python3-torch)")
	}
	if out, err := exec.Command(py, "-c", "import torch").CombinedOutput(); err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Skipf("%s cannot import torch (install Debian's python3-torch): %s", py, lines[len(lines)-1])
	}
	return py
}

// TestExport_PyTorchReproducesLogits trains a Tiny model of each mixer (and the PRISM head) for a few updates,
// exports it, and checks that models/lm/pytorch/protolab_lm.py, run by python3 with Debian's torch, gives the
// workbench's logits on a fixed token sequence: max |Δlogit| ≤ 1e-5·max(1, max |logit|), float32 precision
// (the two sides sum in different orders: chunked versus token-by-token recurrences, fused versus separate
// products, so they agree to a few float32 ulps, not bit for bit; measured ≤ 9.6e-7 with |logit| ≤ 3.1, so the
// bound leaves a factor 30 for other orderings). For the PRISM head, whose logits equal W z whatever the bank, the
// reconstruction ẑ is compared too, with the same bound. The Mamba model is float64 (the export keeps the dtype)
// and agrees to about 1e-15: the PyTorch module is the same function, not a float32 approximation of it. One python3 process reads every
// export, since importing torch takes seconds. Skips when python3 or torch is missing.
func TestExport_PyTorchReproducesLogits(t *testing.T) {
	py := torchPython(t)
	script, err := filepath.Abs(filepath.Join("pytorch", "protolab_lm.py"))
	require.NoError(t, err)
	rows := make([]string, len(exportTokens))
	for b, row := range exportTokens {
		ids := make([]string, len(row))
		for i, id := range row {
			ids[i] = strconv.Itoa(int(id))
		}
		rows[b] = strings.Join(ids, ",")
	}
	dir := t.TempDir()
	cases := exportCases()
	want, wantRecon := map[string][][][]float64{}, map[string][][][]float64{}
	args := []string{script}
	for _, c := range cases {
		m := trainExportCase(t, c)
		want[c.name] = workbenchLogits(t, m)
		if !m.Dense() {
			wantRecon[c.name] = workbenchReconstruction(t, m)
		}
		path := filepath.Join(dir, c.name+".safetensors")
		require.NoError(t, m.Export(path))
		args = append(args, path)
	}
	jsonPath := filepath.Join(dir, "logits.json")
	out, err := exec.Command(py, append(args, "--tokens", strings.Join(rows, ";"), "--out", jsonPath)...).CombinedOutput()
	require.NoError(t, err, "python: %s", out)
	var got struct{ Logits, Reconstruction map[string][][][]float64 }
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".safetensors")
			maxDiff, maxLogit := maxAbsDiff(t, want[c.name], got.Logits[path])
			t.Logf("%s: max |Δlogit| = %.3g, max |logit| = %.3g", c.name, maxDiff, maxLogit)
			require.LessOrEqual(t, maxDiff, 1e-5*math.Max(1, maxLogit), "PyTorch logits differ from the workbench's")
			if w, ok := wantRecon[c.name]; ok {
				// PRISM's logits W(r + ẑ) equal W z whatever the bank does, so the head is checked through ẑ.
				maxDiff, maxZ := maxAbsDiff(t, w, got.Reconstruction[path])
				t.Logf("%s: max |Δẑ| = %.3g, max |ẑ| = %.3g", c.name, maxDiff, maxZ)
				require.Greater(t, maxZ, 0.1, "a reconstruction that tests something")
				require.LessOrEqual(t, maxDiff, 1e-5*math.Max(1, maxZ), "PyTorch ẑ differs from the workbench's")
			}
		})
	}
}

// maxAbsDiff returns max |got − want| and max |want| over [B][T][V] arrays of equal shape.
func maxAbsDiff(t *testing.T, want, got [][][]float64) (maxDiff, maxWant float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for b := range want {
		require.Len(t, got[b], len(want[b]))
		for i := range want[b] {
			require.Len(t, got[b][i], len(want[b][i]))
			for v, x := range want[b][i] {
				maxDiff = math.Max(maxDiff, math.Abs(got[b][i][v]-x))
				maxWant = math.Max(maxWant, math.Abs(x))
			}
		}
	}
	return maxDiff, maxWant
}

// TestExport_LayoutAndMetadata checks, without PyTorch, the documented layout of a ProtoT export: names, the
// [out, in] and [C, 1, K] orientations against the workbench variables, the masks, and the metadata.
func TestExport_LayoutAndMetadata(t *testing.T) {
	c := exportCases()[1] // protot, untied, with a write mask
	m := trainExportCase(t, c)
	path := filepath.Join(t.TempDir(), "export.safetensors")
	require.NoError(t, m.Export(path))
	got, meta, err := store.Load(path)
	require.NoError(t, err)

	var arch Architecture
	require.NoError(t, json.Unmarshal([]byte(meta[ExportMetaArchitecture]), &arch))
	require.Equal(t, ExportFormat, meta[ExportMetaFormat])
	require.Equal(t, ArchitectureOf(m.Config), arch)
	require.Equal(t, []LayerFacts{{Index: 0, Mixer: "protot", SharedRouting: true, Conv: true},
		{Index: 1, Mixer: "protot"}}, arch.Layers)
	require.Equal(t, m.Config.Model.NormEpsilon, arch.NormEpsilon)
	require.False(t, arch.TieEmbeddings)
	var cfg Config
	require.NoError(t, json.Unmarshal([]byte(meta[ExportMetaConfig]), &cfg))
	require.Equal(t, m.Config.Resolved(), cfg)
	require.NotEmpty(t, meta[ExportMetaTokenizer])
	var table map[string]ExportedTensor
	require.NoError(t, json.Unmarshal([]byte(meta[ExportMetaTensors]), &table))
	require.Len(t, table, len(got))

	D, F := m.Config.Model.Width, m.Config.Model.FFNWidth()
	for name, dims := range map[string][]int{
		"embed.embeddings":            {300, D},
		"lm_head.weights":             {300, D},
		"block_00.ffn.gate":           {F, D},
		"block_00.ffn.down":           {D, F},
		"block_00.protot.value":       {D / 2, D},
		"block_00.protot.conv":        {D / 2, 1, 5},
		"block_01.protot.read_query":  {D, D},
		"block_01.protot.write_mask":  {5},
		"block_00.protot.read_mask":   {5},
		"final_norm.gain":             {D},
		"block_01.attn_norm.gain":     {D},
		"block_00.protot.prototypes":  {5, D},
		"block_01.protot.decay_logit": {5},
		"block_01.protot.read_temp":   {},
		"block_00.attn_norm.gain":     {D},
		"block_00.protot.write_temp":  {},
		"block_01.protot.output":      {D, D / 2},
		"block_01.ffn.up":             {F, D},
		"block_00.protot.alpha":       {},
		"block_01.protot.prototypes":  {5, D},
		"block_00.protot.decay_logit": {5},
		"block_01.protot.alpha":       {},
		"block_01.protot.value":       {D / 2, D},
		"block_00.protot.output":      {D, D / 2},
		"block_01.protot.write_temp":  {},
		"block_00.protot.write_mask":  {5},
		"block_01.protot.read_mask":   {5},
		"block_00.ffn_norm.gain":      {D},
		"block_01.ffn_norm.gain":      {D},
		"block_00.ffn.up":             {F, D},
		"block_01.ffn.gate":           {F, D},
		"block_01.ffn.down":           {D, F},
	} {
		require.Contains(t, got, name)
		require.Equal(t, dims, got[name].Shape().Dimensions, name)
	}
	require.Len(t, got, 32, "no other tensors (layer 1 has no conv, layer 0 no read_query)")
	require.Equal(t, []float32{1, 0, 1, 1, 0}, tensors.MustCopyFlatData[float32](got["block_01.protot.write_mask"]))
	require.Equal(t, OrientLinear, table["block_00.ffn.gate"].Orientation)
	require.Equal(t, "/block_00/ffn/gate", table["block_00.ffn.gate"].Variable)
	require.Equal(t, []int{D, F}, table["block_00.ffn.gate"].WorkbenchDims)

	// [out, in] is the transpose of the workbench's [in, out].
	gate := m.Store.GetVariable("/block_00/ffn/gate")
	value, err := gate.Value()
	require.NoError(t, err)
	w := tensors.MustCopyFlatData[float32](value)
	e := tensors.MustCopyFlatData[float32](got["block_00.ffn.gate"])
	for i := 0; i < D; i++ {
		for j := 0; j < F; j++ {
			require.Equal(t, w[i*F+j], e[j*D+i])
		}
	}
}

func TestExport_UnknownVariableIsAnError(t *testing.T) {
	_, err := orientation("/block_00/attention", "bias")
	require.ErrorContains(t, err, "/block_00/attention/bias has no export rule")
	o, err := orientation("/block_12/mamba", "dt_proj")
	require.NoError(t, err)
	require.Equal(t, OrientLinear, o)
}
