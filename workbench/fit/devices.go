package fit

import (
	"os"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/distributed"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/core/tensors/dtensor"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
)

// MeshAxis is the name of the one axis of the device mesh that Config.Devices > 1 splits batches over.
const MeshAxis = "batch"

// sharding is the data-parallel layout of a Train call with Config.Devices = N > 1 (doc.go, "Several devices"): a
// one-axis mesh of N devices, every batch tensor split along axis 0 into N equal shards (shard i, rows
// [i·B/N, (i+1)·B/N), goes to device i), and every variable (weights, moments, step counter) replicated.
type sharding struct {
	n          int
	mesh       *distributed.DeviceMesh
	batch      *distributed.ShardingSpec // axis 0 over MeshAxis, the other axes replicated
	replicated *distributed.ShardingSpec
}

// checkDevices returns an error, before any work, when the backend has fewer than n devices; n ≤ 1 always passes.
func checkDevices(n int, backend compute.Backend) error {
	if n <= 1 {
		return nil
	}
	return devicesError(n, backend.Name(), os.Getenv("GOMLX_BACKEND"), backend.NumDevices())
}

// devicesError is checkDevices on plain values: the backend's name, the $GOMLX_BACKEND it was chosen by, and its
// device count.
func devicesError(n int, backendName, env string, available int) error {
	if n <= available {
		return nil
	}
	if env == "" {
		env = "unset"
	} else {
		env = "\"" + env + "\""
	}
	hint := ""
	if available <= 1 {
		hint = " (the pure-Go backend, and XLA with one visible device, have one)"
	}
	return errors.Errorf("fit.Train: train.devices=%d, but the backend %q (GOMLX_BACKEND=%s) has %d device(s)%s; "+
		"run on an XLA backend whose PJRT plugin sees at least %d devices (e.g. GOMLX_BACKEND=xla:cuda on a host "+
		"with %d GPUs, with CUDA_VISIBLE_DEVICES and PROTOLAB_XLA_OPTIONS visible_devices listing them all), or set "+
		"train.devices=1", n, backendName, env, available, hint, n, n)
}

// newSharding returns the layout for n > 1 devices.
func newSharding(n int) (*sharding, error) {
	if n <= 1 {
		return nil, errors.Errorf("fit: newSharding(%d): want more than one device", n)
	}
	mesh, err := distributed.NewDeviceMesh([]int{n}, []string{MeshAxis})
	if err != nil {
		return nil, errors.Wrap(err, "fit: device mesh")
	}
	batch, err := distributed.NewShardingSpec(mesh, distributed.AxisSpec{MeshAxis})
	if err != nil {
		return nil, errors.Wrap(err, "fit: batch sharding spec")
	}
	return &sharding{n: n, mesh: mesh, batch: batch, replicated: distributed.NewReplicatedShardingSpec(mesh)}, nil
}

// configure makes e run on the mesh: XLA's AutoSharding partitions the one global step graph (the LossFn sees the
// whole batch, so its mean is over the whole batch), every input is split along axis 0, and the outputs (loss,
// gradient norm, learning rate, and the updated variables) are replicated. model.Exec replicates the variables.
func (s *sharding) configure(e *model.Exec) *model.Exec {
	return e.AutoSharding(s.mesh).WithInputShardingSpecs(s.batch).WithOutputShardingSpecs(s.replicated)
}

// checkBatch returns an error naming the first tensor of batch whose axis 0 cannot be split into n equal shards;
// what names the batch ("training batch").
func (s *sharding) checkBatch(batch []*tensors.Tensor, what string) error {
	for i, t := range batch {
		if t.Rank() == 0 {
			return errors.Errorf("fit.Train: %s tensor %d is a scalar, and train.devices=%d splits every batch "+
				"tensor along axis 0 (B); give it a batch axis or set train.devices=1", what, i, s.n)
		}
		if b := t.Shape().Dimensions[0]; b%s.n != 0 {
			return errors.Errorf("fit.Train: %s tensor %d has shape %s: its batch axis (axis 0, B=%d) is not "+
				"divisible by train.devices=%d; use a batch size that is a multiple of %d, or set train.devices=1",
				what, i, t.Shape(), b, s.n, s.n)
		}
	}
	return nil
}

// split cuts every tensor of batch into its n shards, on the host.
func (s *sharding) split(batch []*tensors.Tensor, what string) ([]*dtensor.Tensor, error) {
	if err := s.checkBatch(batch, what); err != nil {
		return nil, err
	}
	out := make([]*dtensor.Tensor, len(batch))
	for i, t := range batch {
		d, err := dtensor.ShardTensor(s.batch, t)
		if err != nil {
			finalizeAll(out[:i])
			return nil, errors.Wrapf(err, "fit.Train: splitting %s tensor %d", what, i)
		}
		out[i] = d
	}
	return out, nil
}

// firstDevice returns device 0's outputs of a distributed execution, which lists each device's outputs in turn, and
// frees the other devices' copies (every output is replicated, so they are equal).
func (s *sharding) firstDevice(outs []*tensors.Tensor) ([]*tensors.Tensor, error) {
	if len(outs) == 0 || len(outs)%s.n != 0 {
		return nil, errors.Errorf("fit.Train: a run on %d devices returned %d outputs, want a positive multiple of %d",
			s.n, len(outs), s.n)
	}
	k := len(outs) / s.n
	for _, t := range outs[k:] {
		_ = t.FinalizeAll()
	}
	return outs[:k], nil
}

func finalizeAll(ts []*dtensor.Tensor) {
	for _, t := range ts {
		if t != nil {
			_ = t.Finalize()
		}
	}
}

// setupDevices checks Config.Devices against the backend and prepares the layout; it runs before anything else.
func (tr *trainer) setupDevices() error {
	if tr.cfg.Devices <= 1 {
		return nil
	}
	if err := checkDevices(tr.cfg.Devices, tr.backend); err != nil {
		return err
	}
	s, err := newSharding(tr.cfg.Devices)
	if err != nil {
		return err
	}
	tr.shard = s
	return nil
}

// peekBatches checks, before the first step, that the next training batch and the first validation batch split
// over the devices; both data positions are restored afterwards.
func (tr *trainer) peekBatches() error {
	if tr.shard == nil {
		return nil
	}
	peek := func(b Batches, what string) error {
		st, err := b.State()
		if err != nil {
			return errors.Wrapf(err, "fit.Train: %s data state", what)
		}
		batch, err := b.Next()
		if err != nil {
			return errors.Wrapf(err, "fit.Train: reading the first %s batch", what)
		}
		if err := tr.shard.checkBatch(batch, what+" batch"); err != nil {
			return err
		}
		return errors.Wrapf(b.Restore(st), "fit.Train: rewinding the %s data", what)
	}
	if err := peek(tr.train, "training"); err != nil {
		return err
	}
	if tr.val != nil {
		return peek(tr.val, "validation")
	}
	return nil
}

// newExec builds a model.Exec for graphFn, laid out over the devices when there are several.
func newExec[F model.ExecGraphFn](tr *trainer, vars *model.Store, graphFn F) (*model.Exec, error) {
	e, err := model.NewExec(tr.backend, vars, graphFn)
	if err != nil || tr.shard == nil {
		return e, err
	}
	return tr.shard.configure(e), nil
}

// exec runs e on batch: directly on one device, or split over the devices, returning device 0's outputs.
func (tr *trainer) exec(e *model.Exec, batch []*tensors.Tensor, what string) ([]*tensors.Tensor, error) {
	if tr.shard == nil {
		return execute(e, batch)
	}
	parts, err := tr.shard.split(batch, what)
	if err != nil {
		return nil, err
	}
	defer finalizeAll(parts)
	args := make([]any, len(parts))
	for i, p := range parts {
		args[i] = p
	}
	outs, err := executeArgs(e, args)
	if err != nil {
		return nil, err
	}
	return tr.shard.firstDevice(outs)
}
