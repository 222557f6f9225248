package classify

import (
	"math"
	"time"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/initializer"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/decoder"
	"github.com/protolab/protolab/models/lm"
	"github.com/protolab/protolab/workbench/fit"
	"github.com/protolab/protolab/workbench/run"
)

// Pooling modes of Config.Pool.
const (
	PoolMean = "mean" // mean of the hidden states of the example's tokens
	PoolLast = "last" // hidden state of the example's last token (docs/spec/protot.md §7.6)
)

// Scope and variables of the classification head (under the root scope, beside the decoder's).
const (
	HeadScope   = "classifier"
	HeadWeights = "weights" // [D, K]
	HeadBias    = "bias"    // [K]
)

// Pool reduces hidden states h [B, T, D] to [B, D] over the first lengths[b] positions of each row (lengths [B],
// integers in [1, T]): their mean (PoolMean) or the last of them (PoolLast). Panics on bad shapes or mode.
func Pool(h, lengths *Node, mode string) *Node {
	if h.Rank() != 3 || lengths.Rank() != 1 || lengths.Shape().Dim(0) != h.Shape().Dim(0) {
		panic(errors.Errorf("classify.Pool: h.shape=%s, lengths.shape=%s, want [B, T, D] and [B]", h.Shape(),
			lengths.Shape()))
	}
	B, T := h.Shape().Dim(0), h.Shape().Dim(1)
	g := h.Graph()
	pos := Iota(g, shapes.Make(dtypes.Int32, B, T), 1) // [B, T]
	n := InsertAxes(ConvertDType(lengths, dtypes.Int32), -1)
	n = BroadcastToDims(n, B, T) // [B, T]
	var w *Node                  // [B, T] pooling weights
	switch mode {
	case PoolMean:
		w = Div(ConvertDType(LessThan(pos, n), h.DType()), ConvertDType(n, h.DType()))
	case PoolLast:
		w = ConvertDType(Equal(pos, AddScalar(n, -1)), h.DType())
	default:
		panic(errors.Errorf("classify.Pool: mode=%q, want %q or %q", mode, PoolMean, PoolLast))
	}
	out := Einsum("bt,btd->bd", w, h)
	out.AssertDims(B, h.Shape().Dim(2))
	return out
}

// Logits runs the decoder on tokens [B, T], pools its final hidden states (decoder.Hidden) over
// lengths [B] and applies the linear head of K classes, created zero-initialised under HeadScope: → logits [B, K].
// Panics if cfg is invalid or on bad shapes.
func Logits(scope *model.Scope, cfg decoder.Config, numClasses int, pool string, tokens, lengths *Node) *Node {
	h := decoder.Hidden(scope, cfg, tokens) // [B, T, D]
	x := Pool(h, lengths, pool)             // [B, D]
	c := scope.At(HeadScope).WithInitializer(initializer.Zero)
	w := c.VariableWithShape(HeadWeights, shapes.Make(h.DType(), cfg.Width, numClasses)).NodeValue(h.Graph())
	b := c.VariableWithShape(HeadBias, shapes.Make(h.DType(), numClasses)).NodeValue(h.Graph())
	logits := Add(Einsum("bd,dk->bk", x, w), BroadcastToDims(InsertAxes(b, 0), x.Shape().Dim(0), numClasses))
	logits.AssertDims(tokens.Shape().Dim(0), numClasses)
	return logits
}

// Result is the outcome of fine-tuning one model on one task.
type Result struct {
	Task    string `json:"task"`
	Model   string `json:"model"` // run name of the language model
	Mixer   string `json:"mixer"`
	Classes int    `json:"classes"`
	Train   int    `json:"train"` // training examples
	Test    int    `json:"test"`  // test examples
	// Accuracy on the test set, with its binomial standard error √(p(1−p)/n).
	Accuracy   float64 `json:"accuracy"`
	AccuracySE float64 `json:"accuracy_se"`
	// Majority is the majority-class baseline: the share of the test set's most frequent class (Task.Majority).
	Majority float64      `json:"majority"`
	Pool     string       `json:"pool"`
	HeadOnly bool         `json:"head_only"`
	History  *fit.History `json:"history"`
	Seconds  float64      `json:"seconds"`
}

// encodeExamples turns examples into rows [EOS, tokens…] cut to maxTokens and padded with EOS, their lengths and
// labels.
func encodeExamples(m *lm.Model, ex []Example, maxTokens int) (ids [][]int32, lengths, labels []int32, err error) {
	eos, ok := m.Tokenizer.SpecialID("<|eos|>")
	if !ok {
		return nil, nil, nil, errors.New("classify: the tokenizer has no <|eos|> token")
	}
	for _, e := range ex {
		row := append([]int32{eos}, m.Tokenizer.Encode(e.Text)...)
		row = row[:min(len(row), maxTokens)]
		lengths = append(lengths, int32(len(row)))
		for len(row) < maxTokens {
			row = append(row, eos)
		}
		ids = append(ids, row)
		labels = append(labels, int32(e.Label))
	}
	return ids, lengths, labels, nil
}

// FineTune trains a linear head on the pooled final hidden states of a copy of m (Model.Fork; m is unchanged) on
// task.Train, fine-tuning every weight or, with cc.HeadOnly, the head alone, for cc.Train.Steps steps of
// cc.BatchSize examples (reshuffled every epoch with the seed of m's run), and reports the test accuracy against the
// majority-class baseline. Each example is [EOS, its tokens] cut to cc.MaxTokens.
func FineTune(m *lm.Model, task *Task, cc Config, opts ...run.Option) (*Result, error) {
	res, _, err := fineTune(m, task, cc, run.NewOptions(opts...))
	return res, err
}

// fineTune is FineTune, also returning the fine-tuned model's variables.
func fineTune(m *lm.Model, task *Task, cc Config, o run.Options) (*Result, *model.Store, error) {
	if err := cc.Validate(); err != nil {
		return nil, nil, errors.WithMessage(err, "classify.FineTune")
	}
	if len(task.Train) == 0 || len(task.Test) == 0 || len(task.Classes) < 2 {
		return nil, nil, errors.Errorf("classify.FineTune: task %q has %d training and %d test examples and %d "+
			"classes; want examples on both sides and ≥ 2 classes", task.Name, len(task.Train), len(task.Test),
			len(task.Classes))
	}
	start := time.Now()
	vars, err := m.Fork()
	if err != nil {
		return nil, nil, err
	}
	if cc.HeadOnly {
		for v := range vars.IterVariables() {
			v.SetTrainable(false)
		}
	}
	trainIDs, trainLen, trainLab, err := encodeExamples(m, task.Train, cc.MaxTokens)
	if err != nil {
		return nil, nil, err
	}
	B := cc.BatchSize
	rng := run.RNG(m.Config.Seed, "classify/"+task.Name)
	var batches [][]*tensors.Tensor
	var perm []int
	for len(batches) < min(cc.Train.Steps, 1<<12) {
		if len(perm) < B {
			perm = rng.Perm(len(trainIDs))
			for len(perm) < B { // fewer examples than a batch: repeat them
				perm = append(perm, rng.Perm(len(trainIDs))...)
			}
		}
		idx := perm[:B]
		perm = perm[B:]
		batches = append(batches, gatherBatch(idx, trainIDs, trainLen, trainLab))
	}
	trainB, err := fit.NewSliceBatches(batches)
	if err != nil {
		return nil, nil, err
	}
	mc, K, pool := m.Config.Model, len(task.Classes), cc.Pool
	lossFn := func(scope *model.Scope, in []*Node) *Node {
		logits := Logits(scope, mc, K, pool, in[0], in[1])
		return ReduceAllMean(decoder.CrossEntropy(InsertAxes(logits, 1), InsertAxes(in[2], 1)))
	}
	res := &Result{Task: task.Name, Model: m.Config.Name(), Mixer: mc.Mixer, Classes: K,
		Train: len(task.Train), Test: len(task.Test), Pool: pool, HeadOnly: cc.HeadOnly}
	tc := cc.Train
	tc.Seed = m.Config.Seed
	if res.History, err = fit.Train(m.Backend, vars, lossFn, trainB, nil, tc,
		fit.Progress(o.Progress), fit.TokensPerBatch(B*cc.MaxTokens), fit.NoDecay(mc.NoDecay()...),
		fit.WithContext(o.Context)); err != nil {
		return nil, nil, errors.WithMessagef(err, "classify.FineTune %s on %s", m.Config.Name(), task.Name)
	}
	pred, err := predict(m, vars, task, cc)
	if err != nil {
		return nil, nil, err
	}
	hits := 0
	for i, e := range task.Test {
		if pred[i] == e.Label {
			hits++
		}
	}
	n := float64(len(task.Test))
	res.Accuracy = float64(hits) / n
	res.AccuracySE = math.Sqrt(res.Accuracy * (1 - res.Accuracy) / n)
	_, res.Majority = task.Majority()
	res.Seconds = time.Since(start).Seconds()
	return res, vars, nil
}

// gatherBatch returns the tensors [tokens [B, T], lengths [B], labels [B]] of the examples idx.
func gatherBatch(idx []int, ids [][]int32, lengths, labels []int32) []*tensors.Tensor {
	tok := make([][]int32, len(idx))
	ln := make([]int32, len(idx))
	lab := make([]int32, len(idx))
	for i, j := range idx {
		tok[i], ln[i], lab[i] = ids[j], lengths[j], labels[j]
	}
	return []*tensors.Tensor{tensors.FromValue(tok), tensors.FromValue(ln), tensors.FromValue(lab)}
}

// predict returns the predicted class of every test example, in batches of cc.BatchSize (the last one padded
// with repeats of the first example, whose predictions are dropped).
func predict(m *lm.Model, vars *model.Store, task *Task, cc Config) ([]int, error) {
	ids, lengths, labels, err := encodeExamples(m, task.Test, cc.MaxTokens)
	if err != nil {
		return nil, err
	}
	mc, K := m.Config.Model, len(task.Classes)
	e, err := model.NewExec(m.Backend, vars, func(scope *model.Scope, tokens, lengths *Node) *Node {
		return ArgMax(Logits(scope, mc, K, cc.Pool, tokens, lengths), -1, dtypes.Int32)
	})
	if err != nil {
		return nil, errors.Wrap(err, "classify.FineTune: prediction graph")
	}
	var out []int
	for lo := 0; lo < len(ids); lo += cc.BatchSize {
		idx := make([]int, cc.BatchSize)
		for i := range idx {
			if lo+i < len(ids) {
				idx[i] = lo + i
			}
		}
		b := gatherBatch(idx, ids, lengths, labels)
		res, err := e.Exec(b[0], b[1])
		if err != nil {
			return nil, errors.Wrap(err, "classify.FineTune: predicting")
		}
		p := tensors.MustCopyFlatData[int32](res[0])
		for i := 0; i < cc.BatchSize && lo+i < len(ids); i++ {
			out = append(out, int(p[i]))
		}
	}
	return out, nil
}

// Report holds every (model, task) fine-tuning of FineTuneAll.
type Report struct {
	Tasks   []TaskSummary `json:"tasks"`
	Results []Result      `json:"results"` // model-major, then task
}

// TaskSummary describes a task of a report.
type TaskSummary struct {
	Name     string   `json:"name"`
	Classes  []string `json:"classes"`
	Train    int      `json:"train"`
	Test     int      `json:"test"`
	Majority float64  `json:"majority"` // share of the test set's most frequent class (Task.Majority)
}

// FineTuneAll fine-tunes every model on every task (FineTune) and collects the results, model-major.
func FineTuneAll(models []*lm.Model, tasks []*Task, cc Config, opts ...run.Option) (*Report, error) {
	o := run.NewOptions(opts...)
	rep := &Report{}
	for _, t := range tasks {
		_, maj := t.Majority()
		rep.Tasks = append(rep.Tasks, TaskSummary{Name: t.Name, Classes: t.Classes, Train: len(t.Train),
			Test: len(t.Test), Majority: maj})
	}
	for _, m := range models {
		for _, t := range tasks {
			if err := o.Err(); err != nil {
				return nil, err
			}
			o.Logf("classify", "fine-tuning %s on %s (%d classes, %d examples)", m.Config.Name(), t.Name,
				len(t.Classes), len(t.Train))
			res, err := FineTune(m, t, cc, run.With(o))
			if err != nil {
				return nil, err
			}
			rep.Results = append(rep.Results, *res)
		}
	}
	return rep, nil
}
