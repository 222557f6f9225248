// Package fit trains a gomlx model: AdamW with weight-decay groups, warmup plus cosine schedule, optional global-norm
// gradient clipping, periodic validation, a progress display, a metrics History returned as plain data, atomic
// checkpoints with exact resume, and NaN/Inf detection. Its optimizer and schedule are those of docs/spec/protot.md §3
// (the ProtoT paper's recipe; equations 1–3 below), with the weight-decay groups of §2.5.
//
// The model is a LossFn (scope, batch tensors → scalar mean loss) and the data are Batches (Next, plus State and
// Restore so a resumed run sees exactly the batches the uninterrupted run would have). Train compiles one step graph
// (loss, gradients, optimizer update) with model.Exec and reuses it for every step; validation has a second graph.
//
//	hist, err := fit.Train(backend, run.NewStore(cfg.Seed), lossFn, train, val, cfg,
//		fit.CheckpointDir("out/ckpt"), fit.OnEval(func(step int, e fit.EvalMetrics) { ... }))
//
// # Schedule (equation 1)
//
// With s the number of updates already done (0 for the first), S = Config.Steps, W = Config.WarmupSteps,
// LR = Config.LR and LR_min = Config.MinLRFrac·LR, update s+1 uses
//
//	lr_s = LR·(s+1)/W                                              if s < W
//	lr_s = LR_min + ½(LR − LR_min)·(1 + cos(π·min(1, (s−W)/max(1, S−W))))   otherwise
//
// so the rate ramps linearly to LR over the first W updates, then follows half a cosine down to LR_min at s = S.
// It is computed in the graph from the step counter, in the loss's dtype.
//
// # Clipping (equation 2)
//
// ‖g‖ = sqrt(Σ over all trainable variables and elements of g²), in the loss's dtype (float32 for 16-bit losses).
// With c = Config.ClipNorm > 0, every gradient is multiplied by min(1, c/‖g‖); c = 0 turns clipping off. The
// reported gradient norm is ‖g‖ before clipping.
//
// # AdamW (equation 3)
//
// For each trainable float variable w with (clipped) gradient g, at update t = s+1, with moments m, v starting at 0:
//
//	m ← β1·m + (1−β1)·g
//	v ← β2·v + (1−β2)·g²
//	w ← w − lr_s·( (m/(1−β1ᵗ)) / (sqrt(v/(1−β2ᵗ)) + ε) + λ·w )
//
// as in Loshchilov & Hutter, "Decoupled Weight Decay Regularization" (arXiv 1711.05101) and PyTorch's AdamW. The
// decay term λ·w (λ = Config.WeightDecay) applies only to the decay group: variables of rank ≥ 2 none of whose path
// elements (scope + "/" + name, split at "/") equals an exempt entry or ends in "_" + entry (Config.Decays). The
// exempt entries are the model's own, passed with the NoDecay option (decoder.Config.NoDecay: its norms, ProtoT's
// and PRISM's prototypes, Mamba's "dt_proj" and "a_log" per docs/spec/protot.md §2.5), plus Config.NoDecay, the
// user's additions. Every rank ≤ 1 variable (norm gains, biases, scalar gates) is never decayed. Moments of 16-bit
// variables are kept in float32.
//
// If the loss or ‖g‖ is NaN or Inf, the step's update is discarded in the graph (weights, moments and the step
// counter keep their values) and Train stops with an error naming the step; no checkpoint is written for it.
//
// # Variables
//
// The optimizer state lives outside the model's scopes:
//
//	/optimizer/step                 int64 scalar, s
//	/optimizer/m/<scope>/<name>     first moment of the model variable <scope>/<name>
//	/optimizer/v/<scope>/<name>     second moment
//
// In safetensors files (workbench/store naming) these are "optimizer.step", "optimizer.m.<scope>.<name>" and
// "optimizer.v.<scope>.<name>"; export model weights alone with store.ExportContext(vars, path, store.Trainable, meta).
//
// # Validation and metrics
//
// Every Config.EvalEvery steps and after the last one, Train rewinds the validation Batches to the position it had
// when the run started and averages the loss of Config.EvalBatches batches (the same batches every time, so the
// points are comparable); perplexity = exp(mean loss). History holds every Config.LogEvery-th step's Metrics (loss,
// learning rate, gradient norm, tokens/s, elapsed time) and every EvalMetrics; OnStep and OnEval receive them as they
// happen. A progress line (step, loss, validation loss, tokens/s, ETA) goes to stderr: redrawn in place on a terminal
// or in GoNB, one line every 5 s elsewhere; Progress(nil) turns it off.
//
// # Checkpoints and resume
//
// With CheckpointDir(dir), Train writes a checkpoint every Config.CheckpointEvery steps, at the end, and when
// interrupted through WithContext, and keeps the newest Config.KeepCheckpoints:
//
//	dir/ckpt-00000400.safetensors   every variable of the context: weights, moments, step counter, RNG state
//	dir/ckpt-00000400.json          Checkpoint: step, data positions, History, Config, and the tensors file's
//	                                name, size and SHA-256
//
// Each file is written to a temporary name and renamed into place, the JSON last; only a JSON file makes a
// checkpoint, so a crash at any moment leaves the previous checkpoint as the newest complete one. When dir already
// holds a checkpoint, Train resumes from the newest: it loads the variables into vars (which should be fresh, like the
// first run's), restores the data positions and the History, and continues. Because the step is deterministic and
// the data positions are restored, the resumed run reproduces the uninterrupted one (tested to 1e-12 in float64; on
// the pure-Go backend the curves are bit-identical). The checkpoint's Config must equal the resumed run's, apart from
// checkpoint_every, keep_checkpoints and log_every, and with RunConfig the run it records (model, data, seed) must
// equal the one given. A newest checkpoint that fails verification (unreadable sidecar, tensors file missing or not
// matching its SHA-256) is set aside as *.corrupt with a warning line, and the run resumes from the newest intact
// one; when none is intact, or one is mismatched, Train returns an error, never a silent fresh start.
//
// Train locks dir (store.Lock) while it runs, so a second Train on the same folder, in any process, fails at once
// naming the holder. Temporary files carry their writer's PID; pruning removes only this process's leftovers and
// those of dead processes, never another live process's file in progress.
//
// # Several devices (data parallelism)
//
// Config.Devices = N > 1 (the key train.devices in a model's config) splits every batch over N devices of this host
// with gomlx's distributed execution (github.com/gomlx/compute/distributed, devices.go): a one-axis device mesh of N devices named
// MeshAxis, every batch tensor split along axis 0 into N equal shards (device i gets rows [i·B/N, (i+1)·B/N)), every
// variable (weights, AdamW moments, step counter) replicated, and the step and validation graphs run with XLA's
// AutoSharding. The graph is the same one-device graph: the LossFn still sees the whole batch [B, …], so its mean
// runs over the whole batch and XLA inserts the cross-device sums. Its loss and gradients are therefore the full
// batch's; split into shards, that is shard i's mean weighted by c_i/Σc, c_i being the number of terms (examples, or
// unmasked tokens) its mean runs over. An unweighted mean of per-shard means would be wrong whenever masks make the
// c_i unequal, and undefined for a shard with no counted token. Checkpoints are unchanged: the variables are merged
// to one host tensor each when written, and a checkpoint resumes with any devices value (devices is not compared on
// resume). N = 0 or 1 (the default 0) is the one-device path, unchanged.
//
// Train refuses, before reading any data or creating the checkpoint folder, N larger than backend.NumDevices() (the
// pure-Go backend has one device: use an XLA backend with N visible devices, or devices=1), and, before the first
// step, a training or validation batch whose axis 0 is not a multiple of N, or a scalar batch tensor.
//
// Tested without several devices (pure-Go backend, one device): the configuration and every refusal, the host-side
// split and merge of batches, the choice of device 0's replicated outputs, and the oracle that the count-weighted
// combination of per-shard losses and gradients (computed by the one-device graph on the shards the split produces)
// equals the full batch's to 1e-12, with unequal masks and an empty shard. Untested here, and covered by
// TestDevices_SeveralDevicesMatchOne only where the backend has 2 or more devices (scripts/device_check.sh on a
// multi-GPU host): the AutoSharding executables themselves, that is compiling and running the step and validation
// graphs on the mesh, the replicated variable updates, and training on N devices matching one device.
// Several hosts are not supported (go-xla has no distributed runtime); run sweeps as one process per device instead
// (protolab launch).
//
// LoadLatest(dir, vars) loads the newest checkpoint into a gomlx model.Store for evaluation; graphs built on vars
// afterwards find the loaded variables (a variable the graph asks for that the checkpoint lacks is created and
// initialised, so callers that must refuse a mismatch check the variables, as lm.Open does).
package fit
