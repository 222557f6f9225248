package probe

import (
	"fmt"
	"strings"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/pkg/errors"
)

// Patch replaces or adds to one probe's activation during a run.
type Patch struct {
	Name string // full probe name, e.g. "block_00.resid_post"
	// Value has the probe's shape and dtype, or 1 in the batch axis to apply the same value to every row. In
	// Generate the time axis may also be 1 (the same value at every patched step).
	Value *tensors.Tensor
	// Add adds Value to the activation; false replaces the activation by Value.
	Add bool
	// Positions lists the positions (indices along the probe's time axis, see TimeAxis) to patch; nil patches
	// every position. Unpatched positions keep their activation bit for bit.
	Positions []int
}

// patchSpec is the graph-structure part of a Patch; the values come in as parameters.
type patchSpec struct {
	name    string
	add     bool
	value   int // input index of the value
	mask    int // input index of the position mask (Run: bool [T]; Generate: bool scalar); -1: none
	timeAxs int
}

// applyPatch returns x with value v replacing it (or added to it) where mask is true: v is x's shape, or 1 in the
// batch axis; mask is a bool [T] along the time axis, a bool scalar, or nil (everywhere). Panics naming the probe
// on a mismatch.
func applyPatch(name string, x, v, mask *Node, add bool, axis int) *Node {
	xd, vd := x.Shape().Dimensions, v.Shape().Dimensions
	ok := v.DType() == x.DType() && len(vd) == len(xd) && len(xd) > 0 && (vd[0] == xd[0] || vd[0] == 1)
	for i := 1; ok && i < len(xd); i++ {
		ok = vd[i] == xd[i]
	}
	if !ok {
		panic(errors.Errorf("probe: patch %q: value shape %s, probe shape %s: want the probe's shape and dtype "+
			"(the batch axis may be 1)", name, v.Shape(), x.Shape()))
	}
	if vd[0] != xd[0] {
		v = BroadcastToDims(v, xd...)
	}
	y := v
	if add {
		y = Add(x, v)
	}
	if mask == nil {
		return y
	}
	ones := make([]int, len(xd))
	for i := range ones {
		ones[i] = 1
	}
	if mask.Rank() == 1 {
		if axis >= len(xd) || mask.Shape().Dim(0) != xd[axis] {
			panic(errors.Errorf("probe: patch %q: positions index time axis %d of length %d, but the probe's shape is %s "+
				"(set its axis with TimeAxis)", name, axis, mask.Shape().Dim(0), x.Shape()))
		}
		ones[axis] = xd[axis]
	}
	return Where(BroadcastToDims(Reshape(mask, ones...), xd...), y, x)
}

// patchInputs validates patches and returns their specs (input indices from first on), the key fragment and
// the arguments: each patch's value, then its mask when mask(p) returns one.
func patchInputs(patches []Patch, o *options, first int, mask func(p Patch, axis int) (any, error)) (
	map[string]patchSpec, string, []any, error) {
	specs := map[string]patchSpec{}
	var key strings.Builder
	var args []any
	for i, p := range patches {
		switch {
		case p.Name == "":
			return nil, "", nil, errors.Errorf("probe: patch %d has no name", i)
		case p.Value == nil:
			return nil, "", nil, errors.Errorf("probe: patch %q has no value", p.Name)
		}
		if _, dup := specs[p.Name]; dup {
			return nil, "", nil, errors.Errorf("probe: two patches of %q: combine them into one value", p.Name)
		}
		s := patchSpec{name: p.Name, add: p.Add, value: first + len(args), mask: -1, timeAxs: o.timeAxis(p.Name)}
		args = append(args, p.Value)
		m, err := mask(p, s.timeAxs)
		if err != nil {
			return nil, "", nil, err
		}
		if m != nil {
			s.mask = first + len(args)
			args = append(args, m)
		}
		specs[p.Name] = s
		fmt.Fprintf(&key, "|%q add=%v %s mask=%v", p.Name, p.Add, p.Value.Shape(), s.mask >= 0)
	}
	return specs, key.String(), args, nil
}
