package run

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/pkg/errors"
)

// DiffKeys returns the dotted keys (as Override and Keys name them) whose values differ between two configurations,
// as "key: a → b", sorted; none means the two encode to the same JSON. Lists are compared whole.
func DiffKeys(a, b any) ([]string, error) {
	fa, err := flattenJSON(a)
	if err != nil {
		return nil, err
	}
	fb, err := flattenJSON(b)
	if err != nil {
		return nil, err
	}
	var out []string
	for k, va := range fa {
		if vb, ok := fb[k]; !ok || !bytes.Equal(va, vb) {
			out = append(out, k+": "+show(va)+" → "+show(fb[k]))
		}
	}
	for k, vb := range fb {
		if _, ok := fa[k]; !ok {
			out = append(out, k+": "+show(nil)+" → "+show(vb))
		}
	}
	sort.Strings(out)
	return out, nil
}

func show(v json.RawMessage) string {
	if v == nil {
		return "(absent)"
	}
	return string(v)
}

// flattenJSON maps every leaf of v's JSON encoding (objects are walked, anything else is a leaf) to its compact
// encoding, keyed by the dotted path.
func flattenJSON(v any) (map[string]json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errors.Wrap(err, "run.DiffKeys: encoding")
	}
	out := map[string]json.RawMessage{}
	var walk func(prefix string, raw json.RawMessage) error
	walk = func(prefix string, raw json.RawMessage) error {
		var obj map[string]json.RawMessage
		if len(raw) > 0 && raw[0] == '{' {
			if err := json.Unmarshal(raw, &obj); err != nil {
				return err
			}
			for k, x := range obj {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				if err := walk(p, x); err != nil {
					return err
				}
			}
			return nil
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return err
		}
		out[prefix] = c.Bytes()
		return nil
	}
	return out, errors.Wrap(walk("", b), "run.DiffKeys")
}
