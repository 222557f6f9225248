package dictionary

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"

	"github.com/protolab/protolab/layers/sae"
)

// Directions returns the dictionary's unit directions d_j = w_j / sqrt(‖w_j‖² + ε) (layers/sae equation 1) as
// float64, row-major [F, D]: feature j adds f_j·d_j to the reconstruction, so a linear read-out W of the input sees
// it as f_j·(W d_j) (the feature's logit signature when W is a language model's head).
func (d *Dictionary) Directions() ([]float64, error) {
	w, err := d.variable(sae.VarWDec, d.F*d.D)
	if err != nil {
		return nil, err
	}
	for j := range d.F {
		row := w[j*d.D : (j+1)*d.D]
		ss := 0.0
		for _, x := range row {
			ss += x * x
		}
		n := math.Sqrt(ss + sae.Eps)
		for i := range row {
			row[i] /= n
		}
	}
	return w, nil
}

// Bias returns the decoder bias b_dec [D] that every reconstruction adds (layers/sae equation 4).
func (d *Dictionary) Bias() ([]float64, error) { return d.variable(sae.VarBDec, d.D) }

// variable returns the SAE variable name as float64, checking its size.
func (d *Dictionary) variable(name string, size int) ([]float64, error) {
	v := d.vars.GetVariable(model.JoinPath("/", sae.Scope, name))
	if v == nil {
		return nil, errors.Errorf("dictionary: no variable %s/%s", sae.Scope, name)
	}
	t, err := v.Value()
	if err != nil {
		return nil, errors.Wrapf(err, "dictionary: reading %s", name)
	}
	var out []float64
	switch t.DType() {
	case dtypes.Float64:
		out = tensors.MustCopyFlatData[float64](t)
	case dtypes.Float32:
		for _, x := range tensors.MustCopyFlatData[float32](t) {
			out = append(out, float64(x))
		}
	default:
		return nil, errors.Errorf("dictionary: %s has dtype %s, want a float", name, t.DType())
	}
	if len(out) != size {
		return nil, errors.Errorf("dictionary: %s has %d values, want %d", name, len(out), size)
	}
	return out, nil
}
