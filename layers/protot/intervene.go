package protot

import (
	"math"
	"math/rand/v2"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
)

// SetMasks sets the write and read masks of the ProtoT layer whose block scope is scope (the variables
// VarWriteMask and VarReadMask under scope.At("protot")), creating them if no graph has yet. A mask has R entries;
// entries ≤ 0 remove that prototype from the softmax (docs/spec/protot.md §5), nil keeps every prototype. The masks act
// identically in Mixer and Step and take effect at the next execution, without recompiling. In a shared-routing
// layer the write mask also masks the read side (ρ = π), and the read mask the read side only.
//
// It returns an error when a mask has the wrong length or a non-finite entry, when it masks every prototype, or,
// in a shared-routing layer, when the two masks together leave no prototype to read.
func SetMasks(scope *model.Scope, cfg Config, layer int, write, read []float64) error {
	R := cfg.NumPrototypes
	kept := func(m []float64, k int) bool { return m == nil || m[k] > 0 }
	for _, m := range []struct {
		name string
		mask []float64
	}{{VarWriteMask, write}, {VarReadMask, read}} {
		if m.mask == nil {
			continue
		}
		if len(m.mask) != R {
			return errors.Errorf("protot.SetMasks: layer %d %s has %d entries, want num_prototypes=%d", layer, m.name,
				len(m.mask), R)
		}
		someKept := false
		for k, x := range m.mask {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return errors.Errorf("protot.SetMasks: layer %d %s[%d]=%g, want a finite value", layer, m.name, k, x)
			}
			someKept = someKept || x > 0
		}
		if !someKept {
			return errors.Errorf("protot.SetMasks: layer %d %s masks all %d prototypes", layer, m.name, R)
		}
	}
	if cfg.SharedRouting(layer) {
		readable := false
		for k := 0; k < R; k++ {
			readable = readable || (kept(write, k) && kept(read, k))
		}
		if !readable {
			return errors.Errorf("protot.SetMasks: layer %d shares routing, and its write and read masks together "+
				"mask all %d prototypes", layer, R)
		}
	}
	c := scope.At(Scope)
	for _, m := range []struct {
		name string
		mask []float64
	}{{VarWriteMask, write}, {VarReadMask, read}} {
		values := make([]float32, R)
		for k := range values {
			values[k] = 1
			if m.mask != nil {
				values[k] = float32(m.mask[k])
			}
		}
		t := tensors.FromFlatDataAndDimensions(values, R)
		v := c.GetVariable(m.name)
		if v == nil {
			c.VariableWithValue(m.name, t).SetTrainable(false)
			continue
		}
		if !v.Shape().Equal(t.Shape()) {
			return errors.Errorf("protot.SetMasks: variable %s has shape %s, want %s", v.Path(), v.Shape(),
				t.Shape())
		}
		if err := v.SetValue(t); err != nil {
			return errors.Wrapf(err, "protot.SetMasks: setting %s", v.Path())
		}
	}
	return nil
}

// ClearMasks resets both masks of the layer under scope to keep every prototype (SetMasks with nil masks).
func ClearMasks(scope *model.Scope, cfg Config, layer int) error {
	return SetMasks(scope, cfg, layer, nil, nil)
}

// ReinitPrototype re-initialises row k of the prototypes P of the layer whose block scope is scope, as at
// initialisation (docs/spec/protot.md §5): N(0, 1)/√D entries drawn from a generator seeded with seed, then scaled to
// unit length. The same seed gives the same row. The variable must exist and hold a value (build or load the
// model first); it returns an error otherwise, or when k is out of range or the dtype is not float32/float64.
func ReinitPrototype(scope *model.Scope, k int, seed uint64) error {
	v := scope.At(Scope).GetVariable(VarPrototypes)
	if v == nil || !v.HasValue() {
		return errors.Errorf("protot.ReinitPrototype: no value for %s/%s (build or load the model first)",
			scope.At(Scope).Scope(), VarPrototypes)
	}
	if v.Shape().Rank() != 2 || k < 0 || k >= v.Shape().Dim(0) {
		return errors.Errorf("protot.ReinitPrototype: prototype %d of %s with shape %s", k, v.Path(), v.Shape())
	}
	D := v.Shape().Dim(1)
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	row := make([]float64, D)
	norm := 0.0
	for i := range row {
		row[i] = rng.NormFloat64() / math.Sqrt(float64(D))
		norm += row[i] * row[i]
	}
	norm = math.Max(math.Sqrt(norm), 1e-6)
	old, err := v.Value()
	if err != nil {
		return errors.Wrapf(err, "protot.ReinitPrototype: reading %s", v.Path())
	}
	var t *tensors.Tensor
	switch v.DType() {
	case dtypes.Float64:
		flat := tensors.MustCopyFlatData[float64](old)
		for i := range row {
			flat[k*D+i] = row[i] / norm
		}
		t = tensors.FromFlatDataAndDimensions(flat, v.Shape().Dimensions...)
	case dtypes.Float32:
		flat := tensors.MustCopyFlatData[float32](old)
		for i := range row {
			flat[k*D+i] = float32(row[i] / norm)
		}
		t = tensors.FromFlatDataAndDimensions(flat, v.Shape().Dimensions...)
	default:
		return errors.Errorf("protot.ReinitPrototype: %s has dtype %s, want float32 or float64", v.Path(), v.DType())
	}
	return errors.Wrapf(v.SetValue(t), "protot.ReinitPrototype: setting %s", v.Path())
}
