package store

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/pkg/errors"
)

// MetaNonTrainable is the metadata key under which ExportContext lists (as a JSON array of tensor names) the exported
// variables that are not trainable; ImportContext marks them non-trainable again.
const MetaNonTrainable = "gomlx.non_trainable"

// Filter selects the variables ExportContext writes; a nil Filter selects all.
type Filter func(v *model.Variable) bool

// Trainable is a Filter selecting trainable variables: the model weights, without optimizer slots, step counters or
// the RNG state.
func Trainable(v *model.Variable) bool { return v.Trainable }

// Name returns the safetensors name of the variable `name` in gomlx scope `scope`: the scope elements and the name
// joined with '.', e.g. ("/block_00/ffn/up", "weights") → "block_00.ffn.up.weights" and ("/", "x") → "x". It returns
// an error when a scope element or the name is empty or contains '.', since the name could then not be split back.
func Name(scope, name string) (string, error) {
	if name == "" || strings.Contains(name, ".") || strings.Contains(name, model.ScopeSeparator) {
		return "", errors.Errorf("variable name %q (scope %q) must be non-empty and contain no '.' or '/'", name, scope)
	}
	if !strings.HasPrefix(scope, model.ScopeSeparator) {
		return "", errors.Errorf("variable %q: scope %q must be absolute (start with %q)", name, scope,
			model.ScopeSeparator)
	}
	elems := strings.Split(strings.TrimPrefix(scope, model.ScopeSeparator), model.ScopeSeparator)
	if scope == model.RootScopePath {
		elems = nil
	}
	for _, e := range elems {
		if e == "" || strings.Contains(e, ".") {
			return "", errors.Errorf("variable %q: scope %q has an element %q that is empty or contains '.'",
				name, scope, e)
		}
	}
	return strings.Join(append(elems, name), "."), nil
}

// SplitName inverts Name: "block_00.ffn.up.weights" → ("/block_00/ffn/up", "weights"), "x" → ("/", "x"). It returns
// an error for an empty name or an empty element.
func SplitName(tensorName string) (scope, name string, err error) {
	elems := strings.Split(tensorName, ".")
	for _, e := range elems {
		if e == "" || strings.Contains(e, model.ScopeSeparator) {
			return "", "", errors.Errorf("tensor name %q: empty element or '/' (want e.g. \"block_00.ffn.weights\")",
				tensorName)
		}
	}
	name = elems[len(elems)-1]
	scope = model.ScopeSeparator + strings.Join(elems[:len(elems)-1], model.ScopeSeparator)
	return scope, name, nil
}

// ExportContext writes the variables of s selected by filter (nil: all) to path as safetensors, named as Name
// documents, with metadata (may be nil) plus MetaNonTrainable. Every selected variable must have a value: a variable
// created by a graph that has not run yet is an error naming it.
func ExportContext(s *model.Store, path string, filter Filter, metadata map[string]string) error {
	values := map[string]*tensors.Tensor{}
	var nonTrainable []string
	for v := range s.IterVariables() {
		if filter != nil && !filter(v) {
			continue
		}
		key, err := Name(v.Scope(), v.Name())
		if err != nil {
			return errors.WithMessagef(err, "store.ExportContext %s", path)
		}
		if !v.HasValue() {
			return errors.Errorf("store.ExportContext %s: variable %s has no value yet (run a graph that uses it "+
				"first, or call Store.InitializeVariables)", path, v.Path())
		}
		value, err := v.Value()
		if err != nil {
			return errors.Wrapf(err, "store.ExportContext %s: variable %s", path, v.Path())
		}
		values[key] = value
		if !v.Trainable {
			nonTrainable = append(nonTrainable, key)
		}
	}
	meta := make(map[string]string, len(metadata)+1)
	for k, val := range metadata {
		meta[k] = val
	}
	sort.Strings(nonTrainable)
	list, _ := json.Marshal(append([]string{}, nonTrainable...)) // [] rather than null when empty
	meta[MetaNonTrainable] = string(list)
	return Save(path, values, meta)
}

// ImportContext sets the variables of s from the safetensors file at path and returns the file's metadata.
// A variable that already exists in s must have the stored dtype and dimensions and gets the stored value; a
// missing one is created at its path. Variables listed under
// MetaNonTrainable, and every non-float variable, are marked non-trainable; others keep their flag (new ones are
// trainable). Nothing is changed unless every tensor fits: a mismatch is an error naming the file, the tensor and
// both shapes.
//
// Graphs built afterwards on s find the variables already present and use their values; a variable the model asks
// for that the file lacks is created and initialised as usual.
func ImportContext(s *model.Store, path string) (map[string]string, error) {
	values, metadata, err := Load(path)
	if err != nil {
		return nil, errors.WithMessage(err, "store.ImportContext")
	}
	nonTrainable := map[string]bool{}
	if list, ok := metadata[MetaNonTrainable]; ok {
		var names []string
		if err := json.Unmarshal([]byte(list), &names); err != nil {
			return nil, errors.Wrapf(err, "store.ImportContext %s: metadata %q is not a JSON list of names",
				path, MetaNonTrainable)
		}
		for _, n := range names {
			nonTrainable[n] = true
		}
	}

	type target struct {
		key, scope, name string
		existing         *model.Variable
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	targets := make([]target, 0, len(keys))
	for _, key := range keys {
		scope, name, err := SplitName(key)
		if err != nil {
			return nil, errors.WithMessagef(err, "store.ImportContext %s", path)
		}
		existing := s.GetVariable(model.JoinPath(scope, name))
		if existing != nil && !existing.Shape().Equal(values[key].Shape()) {
			return nil, errors.Errorf("store.ImportContext %s: tensor %q has shape %s, but variable %s in the "+
				"store has shape %s", path, key, values[key].Shape(), existing.Path(), existing.Shape())
		}
		targets = append(targets, target{key: key, scope: scope, name: name, existing: existing})
	}
	for _, tg := range targets {
		value := values[tg.key]
		v := tg.existing
		if v != nil {
			if err := v.SetValue(value); err != nil {
				return nil, errors.Wrapf(err, "store.ImportContext %s: setting variable %s", path, v.Path())
			}
		} else {
			if v, err = s.CreateVariable(model.JoinPath(tg.scope, tg.name), value); err != nil {
				return nil, errors.Wrapf(err, "store.ImportContext %s: creating variable %s", path, tg.key)
			}
		}
		if nonTrainable[tg.key] || !value.DType().IsFloat() {
			v.SetTrainable(false)
		}
	}
	return metadata, nil
}
