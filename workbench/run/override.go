package run

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/pkg/errors"
)

// Override applies assignments like "model.num_layers=4; train.lr=3e-4" to cfg, which must be a non-nil pointer to a
// struct. Keys are dotted paths of JSON field names (the `json` tags); values are JSON literals, except that a string
// field also takes an unquoted word (train.schedule=cosine). Assignments are separated by ';' or newlines; blank ones
// are ignored. An unknown key or a value that does not fit the field's type is an error naming the key; cfg is left
// unchanged unless every assignment succeeds.
func Override(cfg any, assignments string) error {
	root := reflect.ValueOf(cfg)
	if root.Kind() != reflect.Pointer || root.IsNil() || root.Elem().Kind() != reflect.Struct {
		return errors.Errorf("run.Override: cfg must be a non-nil pointer to a struct, got %T", cfg)
	}
	// Work on a copy so that a failing assignment leaves cfg untouched.
	work := reflect.New(root.Elem().Type())
	work.Elem().Set(root.Elem())
	for _, a := range splitAssignments(assignments) {
		key, value, ok := strings.Cut(a, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return errors.Errorf("override %q: want key=value", a)
		}
		field, err := lookupField(work.Elem(), key)
		if err != nil {
			return errors.Wrapf(err, "override %q", a)
		}
		if err := setField(field, value); err != nil {
			return errors.Wrapf(err, "override %q: key %s", a, key)
		}
	}
	root.Elem().Set(work.Elem())
	return nil
}

// Keys lists every settable dotted key of the struct cfg points to (or of the struct cfg), sorted; for help texts.
// Fields of an embedded struct without a JSON name are listed at the level of the struct embedding them (as JSON
// encodes them).
func Keys(cfg any) []string {
	v := reflect.ValueOf(cfg)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	var keys []string
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		for name, fv := range fieldsOf(v) {
			if fv.Kind() == reflect.Struct {
				walk(fv, prefix+name+".")
			} else {
				keys = append(keys, prefix+name)
			}
		}
	}
	if v.Kind() == reflect.Struct {
		walk(v, "")
	}
	sort.Strings(keys)
	return keys
}

// promoted reports whether f is an embedded struct whose fields JSON encodes at the level of the embedding struct.
func promoted(f reflect.StructField) bool {
	if !f.Anonymous || f.Type.Kind() != reflect.Struct {
		return false
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name == "" && f.Tag.Get("json") != "-"
}

func splitAssignments(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' }) {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// jsonName returns the JSON name of an exported field, and false for unexported or `json:"-"` fields.
func jsonName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// fieldsOf lists the settable fields of struct value v by JSON name, with embedded structs' fields promoted.
func fieldsOf(v reflect.Value) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	t := v.Type()
	for j := 0; j < t.NumField(); j++ {
		if promoted(t.Field(j)) {
			for name, f := range fieldsOf(v.Field(j)) {
				if _, ok := out[name]; !ok { // the outer field wins, as in encoding/json
					out[name] = f
				}
			}
			continue
		}
		if name, ok := jsonName(t.Field(j)); ok {
			out[name] = v.Field(j)
		}
	}
	return out
}

func lookupField(v reflect.Value, key string) (reflect.Value, error) {
	parts := strings.Split(key, ".")
	for i, part := range parts {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, errors.Errorf("key %s: %s is a %s, not a section",
				key, strings.Join(parts[:i], "."), v.Kind())
		}
		fields := fieldsOf(v)
		f, ok := fields[part]
		if !ok {
			section := strings.Join(parts[:i], ".")
			if section == "" {
				section = "the top level"
			}
			known := make([]string, 0, len(fields))
			for name := range fields {
				known = append(known, name)
			}
			sort.Strings(known)
			return reflect.Value{}, errors.Errorf("unknown key %q: %s has no field %q (known: %s)",
				key, section, part, strings.Join(known, ", "))
		}
		v = f
	}
	if v.Kind() == reflect.Struct {
		return reflect.Value{}, errors.Errorf("key %s names a section, not a value (set one of its fields)", key)
	}
	return v, nil
}

func setField(field reflect.Value, value string) error {
	ptr := reflect.New(field.Type())
	err := json.Unmarshal([]byte(value), ptr.Interface())
	if err != nil && field.Kind() == reflect.String {
		ptr.Elem().SetString(value) // unquoted word for a string field
		err = nil
	}
	if err != nil {
		return errors.Errorf("value %q is not a valid %s", value, describeType(field.Type()))
	}
	field.Set(ptr.Elem())
	return nil
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean (true or false)"
	case reflect.Slice:
		return fmt.Sprintf("JSON list of %s", describeType(t.Elem()))
	}
	return t.String()
}
