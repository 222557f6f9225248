package speed

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/layers/attention"
	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/models/timing"
	"github.com/protolab/protolab/workbench/run"
	"github.com/protolab/protolab/workbench/stats"
)

// TestNormaliseThroughput_HandComputed checks the ratio fields on made-up rows: relative to the mixer's first
// context that ran, and against attention at the same T.
func TestNormaliseThroughput_HandComputed(t *testing.T) {
	rows := []ThroughputRow{
		{Mixer: "attention", T: 256, TokensPerSec: 1000, TokensPerCPUSec: 600, PredictedTokensPerSec: 2000, TrainFLOPs: 10},
		{Mixer: "attention", T: 1024, TokensPerSec: 400, TokensPerCPUSec: 200, PredictedTokensPerSec: 1000, TrainFLOPs: 25},
		{Mixer: "protot", T: 256, Skipped: "too big"},
		{Mixer: "protot", T: 1024, TokensPerSec: 900, TokensPerCPUSec: 500, PredictedTokensPerSec: 1800, TrainFLOPs: 8},
		{Mixer: "protot", T: 4096, TokensPerSec: 800, TokensPerCPUSec: 400, PredictedTokensPerSec: 1800, TrainFLOPs: 8},
	}
	NormaliseThroughput(rows)
	a := rows[1]
	require.InDelta(t, 0.5, a.PredictedRel, 1e-15)       // 1000 / 2000
	require.InDelta(t, 0.4, a.PredictedRelMatMul, 1e-15) // 10 / 25
	require.InDelta(t, 0.4, a.MeasuredRel, 1e-15)        // 400 / 1000
	require.InDelta(t, 1.0/3, a.MeasuredRelCPU, 1e-15)   // 200 / 600
	require.InDelta(t, 2.0/3, a.Agreement, 1e-15)        // (1/3) / 0.5
	require.Equal(t, 1.0, a.MeasuredSpeedup)
	require.Zero(t, rows[2].PredictedRel, "skipped rows keep zero ratios")
	p1, p2 := rows[3], rows[4]
	require.Equal(t, 1.0, p1.MeasuredRel, "the first protot row that ran is the reference")
	require.InDelta(t, 0.8, p2.MeasuredRelCPU, 1e-15) // 400 / 500
	require.InDelta(t, 0.8, p2.Agreement, 1e-15)
	require.InDelta(t, 2.5, p1.MeasuredSpeedup, 1e-15)  // 500 / 200
	require.InDelta(t, 1.8, p1.PredictedSpeedup, 1e-15) // 1800 / 1000
	require.Zero(t, p2.MeasuredSpeedup, "no attention row at T=4096")
}

func TestRun_TinyThroughputShapesPredictionsAndJSON(t *testing.T) {
	cfg := Tiny()
	cfg.Mode = ModeThroughput
	out := t.TempDir()
	res, err := Runs.Run(cfg, run.Progress(nil), run.Overrides("steps=2"), run.Out(out))
	require.NoError(t, err)
	require.Equal(t, ModeThroughput, res.Mode)
	require.Len(t, res.Throughput, len(cfg.Mixers)*len(cfg.Contexts))
	require.Positive(t, res.Machine.MatMulGFLOPs)
	require.Positive(t, res.Machine.ElementwiseGops)
	require.Positive(t, res.Machine.RoofGFLOPs)
	require.Equal(t, "steps=2", res.Provenance.Overrides)
	i := 0
	for _, mixer := range cfg.Mixers {
		cm, err := timing.CostModel(cfg.ModelConfig(mixer))
		require.NoError(t, err)
		first := res.Throughput[i]
		for _, T := range cfg.Contexts {
			r := res.Throughput[i]
			i++
			require.Equal(t, mixer, r.Mixer)
			require.Equal(t, T, r.T)
			require.Empty(t, r.Skipped)
			// The preset's "attention" is the full form, attention_chunked the chunked one; the row says which ran.
			wantForm := map[string]string{decoder.MixerAttention: attention.KindFull,
				MixerAttentionChunked: attention.KindChunked}[mixer]
			require.Equal(t, wantForm, r.Form, mixer)
			require.Equal(t, mixer, r.Label())
			require.Equal(t, cfg.TokenBudget/T, r.Batch)
			require.Len(t, r.StepSeconds, cfg.Steps)
			require.Positive(t, r.TokensPerSec)
			require.Equal(t, cfg.Steps, r.Spread.N)
			require.LessOrEqual(t, r.Spread.Min, r.TokensPerSec)
			require.GreaterOrEqual(t, r.Spread.Max, r.TokensPerSec)
			require.Positive(t, r.Loss)
			require.GreaterOrEqual(t, r.PeakMB, r.BaseMB)
			require.Positive(t, r.EstimatedMB)
			// The predictions are theory/cost's, at the measured machine rates.
			pred := cm.Train(T)
			require.Equal(t, pred.MatMul, r.TrainFLOPs)
			require.Equal(t, pred.Elementwise, r.TrainElementwise)
			require.InDelta(t, 1/pred.Seconds(res.Machine.MatMulGFLOPs*1e9, res.Machine.ElementwiseGops*1e9),
				r.PredictedTokensPerSec, 1e-9*r.PredictedTokensPerSec)
			require.InDelta(t, r.PredictedTokensPerSec/first.PredictedTokensPerSec, r.PredictedRel, 1e-12)
			require.InDelta(t, r.TokensPerSec/first.TokensPerSec, r.MeasuredRel, 1e-12)
			require.InDelta(t, first.TrainFLOPs/r.TrainFLOPs, r.PredictedRelMatMul, 1e-12)
			// The measured rate of matrix-product work and its share of the run's measured matmul roof.
			require.InDelta(t, r.TrainFLOPs*r.TokensPerSec/1e9, r.GFLOPsPerSec, 1e-9*r.GFLOPsPerSec)
			require.InDelta(t, r.GFLOPsPerSec/res.Machine.RoofGFLOPs, r.RoofFraction, 1e-12)
		}
		// The mixer's architecture, as the PyTorch export states it (scripts/torch_throughput.py builds it).
		require.Equal(t, lm.ArchitectureOf(lm.Config{Model: cfg.ModelConfig(mixer), Head: lm.HeadDense}),
			res.Architectures[mixer], mixer)
	}
	require.Len(t, res.Architectures, len(cfg.Mixers))
	// Round trip through the stored result; the partial file is gone.
	back, ok, err := run.Stored[*Result](Study, cfg, run.Out(out))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, res.Throughput, back.Throughput)
	require.Equal(t, res.Machine, back.Machine)
	require.Equal(t, res.Architectures, back.Architectures)
	require.Equal(t, res.Provenance.GitCommit, back.Provenance.GitCommit)
	cfgJSON, err := json.Marshal(back.Provenance.Config)
	require.NoError(t, err)
	var cfgBack Config
	require.NoError(t, json.Unmarshal(cfgJSON, &cfgBack))
	require.Equal(t, cfg, cfgBack)
	partial, err := filepath.Glob(filepath.Join(out, Study, "partial-*.json"))
	require.NoError(t, err)
	require.Empty(t, partial)
}

func TestRun_ThroughputSkipsWhatExceedsMemory(t *testing.T) {
	cfg := Tiny()
	cfg.Mixers, cfg.MaxMemoryGB = []string{decoder.MixerAttention}, 1e-6
	res, err := Runs.Run(cfg, run.Progress(nil))
	require.NoError(t, err)
	require.Len(t, res.Throughput, len(cfg.Contexts))
	for _, r := range res.Throughput {
		require.Contains(t, r.Skipped, "max_memory_gb")
		require.Empty(t, r.StepSeconds)
	}
	var out bytes.Buffer
	require.NoError(t, WriteThroughputTable(&out, res))
	require.Contains(t, out.String(), "skipped: attention T=16: estimated peak memory")
}

func TestRun_TinyDecodeStatesAndRatios(t *testing.T) {
	cfg := Tiny()
	cfg.Mode = ModeDecode
	res, err := Runs.Run(cfg, run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, "decode", res.Mode)
	// Every mixer but attention_chunked (decoding has one attention form) at every context.
	decoders := slices.DeleteFunc(slices.Clone(cfg.Mixers), func(m string) bool { return m == MixerAttentionChunked })
	require.Len(t, cfg.Mixers, len(decoders)+1, "the preset runs attention_chunked")
	require.Len(t, res.Decode, len(decoders)*len(cfg.Contexts))
	byKey := map[string]map[int]DecodeRow{}
	for _, r := range res.Decode {
		require.Len(t, r.StepMs, cfg.DecodeTokens)
		require.Positive(t, r.MsPerToken)
		require.Equal(t, cfg.DecodeTokens, r.Spread.N)
		require.LessOrEqual(t, r.Spread.Q1, r.MsPerToken)
		require.GreaterOrEqual(t, r.Spread.Q3, r.MsPerToken)
		require.Equal(t, r.MeasuredStateBytes, r.StateBytes, "%s: theory/cost's state equals StateShapes'", r.Mixer)
		if byKey[r.Mixer] == nil {
			byKey[r.Mixer] = map[int]DecodeRow{}
		}
		byKey[r.Mixer][r.Context] = r
	}
	n0, n1 := cfg.Contexts[0], cfg.Contexts[1]
	for _, m := range decoders {
		r0, r1 := byKey[m][n0], byKey[m][n1]
		require.Equal(t, 1.0, r0.PredictedRel)
		require.InDelta(t, r1.MsPerToken/r0.MsPerToken, r1.MeasuredRel, 1e-12)
		if m == decoder.MixerAttention {
			// The KV cache grows with the context: 2·H·D_h floats per token and layer.
			require.Equal(t, (n1-n0)*2*cfg.Width*cfg.NumLayers*4, r1.StateBytes-r0.StateBytes)
			require.Greater(t, r1.PredictedRel, 1.0)
		} else {
			require.Equal(t, r0.StateBytes, r1.StateBytes, m)
			require.Equal(t, 1.0, r1.PredictedRel, m)
		}
	}
}

// TestRun_DecodeContexts: decode_contexts, when set, are the decoding benchmark's contexts (the training one keeps
// contexts), and the models decode up to the longest of them.
func TestRun_DecodeContexts(t *testing.T) {
	cfg := Tiny()
	cfg.Mixers = []string{decoder.MixerProtoT, decoder.MixerAttention}
	cfg.DecodeContexts = []int{16, 64, 256}
	require.Equal(t, 256, cfg.ModelConfig(decoder.MixerAttention).MaxLen)
	res, err := Runs.Run(cfg, run.Progress(nil))
	require.NoError(t, err)
	var train, dec []int
	for _, r := range res.Throughput {
		if r.Mixer == decoder.MixerProtoT {
			train = append(train, r.T)
		}
	}
	for _, r := range res.Decode {
		if r.Mixer == decoder.MixerAttention {
			dec = append(dec, r.Context)
		}
	}
	require.Equal(t, cfg.Contexts, train)
	require.Equal(t, cfg.DecodeContexts, dec)
	small := Small()
	require.Equal(t, 32768, small.DecodeContexts[len(small.DecodeContexts)-1], "protocol v2 decodes to 32k")
}

func TestConfig_PresetsAndErrors(t *testing.T) {
	for _, name := range []string{"tiny", "small", "paper"} {
		c, err := Preset(name)
		require.NoError(t, err)
		require.NoError(t, c.Validate(), name)
	}
	_, err := Preset("huge")
	require.ErrorContains(t, err, `unknown preset "huge"`)
	require.Equal(t, 16, Small().ProtoT.ChunkSize, "Small uses the CPU-friendly chunk")
	require.NoError(t, Quick().Validate())
	for _, tc := range []struct{ set, mention string }{
		{"contexts=[64,16]", "ascending"},
		{"mixers=[\"protot\",\"protot\"]", "twice"},
		{"mixers=[\"lstm\"]", "unknown"},
		{"warmup=0", "warmup"},
		{"token_budget=0", "token_budget"},
		{"protot.chunk_size=0", "chunk_size"},
		{"max_memory_gb=0", "max_memory_gb"},
		{"mode=prefill", `mode="prefill"`},
		{"decode_contexts=[64,16]", "decode_contexts=[64 16]"},
	} {
		c := Tiny()
		require.NoError(t, run.Override(&c, tc.set))
		require.ErrorContains(t, c.Validate(), tc.mention, tc.set)
		_, err := Runs.Run(c, run.Progress(nil))
		require.ErrorContains(t, err, tc.mention, tc.set)
	}
}

// benchSample is a made-up result with two mixers, a skipped row and decode rows.
func benchSample() *Result {
	res := &Result{Throughput: []ThroughputRow{
		{Mixer: "attention", T: 256, TokensPerSec: 1000, TokensPerCPUSec: 500, PredictedTokensPerSec: 3000, TrainFLOPs: 1, PeakMB: 300, BaseMB: 100, EstimatedMB: 250},
		{Mixer: "attention", T: 1024, Skipped: "estimated peak memory 12 GB exceeds max_memory_gb=10", EstimatedMB: 12000},
		{Mixer: "protot", T: 256, TokensPerSec: 800, TokensPerCPUSec: 400, PredictedTokensPerSec: 2000, TrainFLOPs: 1, PeakMB: 200, BaseMB: 100, EstimatedMB: 150},
		{Mixer: "protot", T: 1024, TokensPerSec: 700, TokensPerCPUSec: 350, PredictedTokensPerSec: 2000, TrainFLOPs: 1, PeakMB: 210, BaseMB: 100, EstimatedMB: 150},
	}, Decode: []DecodeRow{
		{Mixer: "attention", Context: 256, MsPerToken: 2, PredictedMsPerToken: 0.1, StateBytes: 1 << 20},
		{Mixer: "attention", Context: 1024, MsPerToken: 5, PredictedMsPerToken: 0.3, StateBytes: 4 << 20},
		{Mixer: "protot", Context: 256, MsPerToken: 1, PredictedMsPerToken: 0.05, StateBytes: 1 << 15},
		{Mixer: "protot", Context: 1024, MsPerToken: 1, PredictedMsPerToken: 0.05, StateBytes: 1 << 15},
	}}
	NormaliseThroughput(res.Throughput)
	NormaliseDecode(res.Decode)
	return res
}

func TestBenchFigures_OptionJSON(t *testing.T) {
	res := benchSample()
	opt := ThroughputChart(res).RenderSnippet().Option
	for _, want := range []string{`"name":"attention"`, `"name":"protot"`, `"name":"protot predicted"`,
		`"type":"dashed"`, "Training throughput vs context"} {
		require.Contains(t, opt, want)
	}
	var o map[string]any
	require.NoError(t, json.Unmarshal([]byte(opt), &o))
	series := o["series"].([]any)
	require.Len(t, series, 4)
	// protot predicted at T=1024 = 800 · (2000/2000) = 800; measured 700.
	pred := series[3].(map[string]any)["data"].([]any)
	require.Equal(t, []any{1024.0, 800.0}, pred[1].(map[string]any)["value"])
	// The skipped attention point is a gap.
	att := series[0].(map[string]any)["data"].([]any)
	require.Equal(t, "-", att[1].(map[string]any)["value"].([]any)[1])

	// With repetitions each measured curve gets a band over their interquartile range, in its own colour.
	banded := benchSample()
	banded.Throughput[0].Spread = stats.Spread{N: 10, Q1: 900, Median: 1000, Q3: 1100}
	bopt := ThroughputChart(banded).RenderSnippet().Option
	require.Contains(t, bopt, `"id":"band-0-hi"`)
	require.Contains(t, bopt, "interquartile range")
	banded.Decode[2].Spread = stats.Spread{N: 10, Q1: 0.9, Median: 1, Q3: 1.2}
	require.Contains(t, DecodeChart(banded).RenderSnippet().Option, `"id":"band-1-hi"`)

	dopt := DecodeChart(res).RenderSnippet().Option
	require.Contains(t, dopt, `"name":"attention predicted"`)
	require.Contains(t, dopt, "ms/token")
	mopt := MemoryChart(res).RenderSnippet().Option
	require.Contains(t, mopt, `"name":"protot estimate"`)
	require.Contains(t, mopt, "MB above base")
	require.Contains(t, StateChart(res).RenderSnippet().Option, "KB per sequence")

	var out bytes.Buffer
	require.NoError(t, WriteThroughputTable(&out, res))
	require.Contains(t, out.String(), "tokens/cpu-s")
	require.Contains(t, out.String(), "skipped: attention T=1024: estimated peak memory 12 GB")
	out.Reset()
	require.NoError(t, WriteDecodeTable(&out, res))
	require.Contains(t, out.String(), "ms/token")
	require.Contains(t, out.String(), "1024.0") // attention's 4 MB state in KB
}

// A CPU time per token that the clock cannot resolve is not printed as digits: three tokens timed with a 10 ms
// clock read 0.000 or 3.333 ms each; a resolved one is printed with three significant digits.
func TestWriteDecodeTable_UnresolvedCPUTime(t *testing.T) {
	res := &Result{Decode: []DecodeRow{
		{Mixer: "protot", Context: 8, MsPerToken: 1, CPUMsPerToken: 0, CPUResolutionMs: 10.0 / 3},
		{Mixer: "protot", Context: 16, MsPerToken: 1, CPUMsPerToken: 10.0 / 3, CPUResolutionMs: 10.0 / 3},
		{Mixer: "mamba", Context: 8, MsPerToken: 1, CPUMsPerToken: 1.23456, CPUResolutionMs: 1e-6},
	}}
	var out bytes.Buffer
	require.NoError(t, WriteDecodeTable(&out, res))
	s := out.String()
	require.Contains(t, s, "<3.3")
	require.Contains(t, s, "<6.7")
	require.Contains(t, s, "1.23")
	require.NotContains(t, s, "3.333")
}

// TestNotebook_ShowsTheProtocolThenTheQuickRun: at the Small preset a stored protocol run (Small) wins and without it
// the stored quick run is loaded; at another preset that preset's stored result. Nothing is measured: the rows are
// the fake ones stored here.
func TestNotebook_ShowsTheProtocolThenTheQuickRun(t *testing.T) {
	t.Setenv(run.ResultsEnv, t.TempDir()) // an empty shipped folder: the checkout's results/ may hold a protocol run
	out := run.Out(t.TempDir())
	fake := func(ms float64) *Result {
		return &Result{Mode: ModeBoth, Decode: []DecodeRow{{Mixer: "protot", Context: 8, MsPerToken: ms}}}
	}
	stash := func(cfg Config, r *Result) {
		_, err := run.Recompute(Study, cfg, []run.Option{out, run.Progress(nil)},
			func(Config, *run.Provenance, run.Options) (*Result, error) { return r, nil })
		require.NoError(t, err)
	}
	t.Setenv(run.PresetEnv, "small")
	var log bytes.Buffer
	stash(Quick(), fake(1.5))
	got, err := Runs.Notebook(out, run.Progress(&log))
	require.NoError(t, err)
	require.Contains(t, log.String(), "quick run")
	require.Equal(t, 1.5, got.Decode[0].MsPerToken)

	log.Reset()
	stash(Small(), fake(2.5))
	got, err = Runs.Notebook(out, run.Progress(&log))
	require.NoError(t, err)
	require.Contains(t, log.String(), "stored protocol run")
	require.Equal(t, 2.5, got.Decode[0].MsPerToken)

	t.Setenv(run.PresetEnv, "tiny")
	stash(Tiny(), fake(0.5))
	got, err = Runs.Notebook(out, run.Progress(nil))
	require.NoError(t, err)
	require.Equal(t, 0.5, got.Decode[0].MsPerToken)
	t.Setenv(run.PresetEnv, "huge")
	_, err = Runs.Notebook(out)
	require.ErrorContains(t, err, `"huge"`)
}

// A row names the attention form that ran when the mixer's name does not: "attention" with attention.kind choosing
// the chunked form is "attention[chunked]".
func TestThroughputRow_Label(t *testing.T) {
	require.Equal(t, "attention[chunked]", ThroughputRow{Mixer: decoder.MixerAttention, Form: attention.KindChunked}.Label())
	require.Equal(t, "attention", ThroughputRow{Mixer: decoder.MixerAttention, Form: attention.KindFull}.Label())
	require.Equal(t, MixerAttentionChunked, ThroughputRow{Mixer: MixerAttentionChunked, Form: attention.KindChunked}.Label())
	require.Equal(t, "protot", ThroughputRow{Mixer: decoder.MixerProtoT}.Label())
}
