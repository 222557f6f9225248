package run

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pkg/errors"
)

// XLAOptionsEnv holds the PJRT client options of the XLA backend, as a comma-separated list of key=value, e.g.
//
//	PROTOLAB_XLA_OPTIONS="preallocate=false,memory_fraction=0.5,visible_devices=0;1"
//
// The keys are the plugin's own. The CUDA plugin's common ones have fixed types: preallocate (bool: reserve most of
// the GPU's memory at start), memory_fraction (float: the share reserved), allocator (string: default, platform, bfc,
// cuda_async), visible_devices (a ";"-separated list of device ordinals). Any other key's value is read as a bool
// (true/false), an integer, a float, a ";"-list of integers, or else a string.
const XLAOptionsEnv = "PROTOLAB_XLA_OPTIONS"

// xlaOptionKinds are the types of the CUDA plugin's common options (XLA's xla/pjrt/c/pjrt_c_api_gpu_internal.cc).
var xlaOptionKinds = map[string]string{
	"preallocate": "bool", "memory_fraction": "float", "allocator": "string", "visible_devices": "list",
	"platform_name": "string", "node_id": "int", "num_nodes": "int", "enable_mock_nccl": "bool",
}

// ParseXLAOptions reads a PROTOLAB_XLA_OPTIONS value into the plugin client options go-xla accepts (bool, int64,
// float32, []int64, string). An empty value gives no options.
func ParseXLAOptions(s string) (map[string]any, error) {
	opts := map[string]any{}
	for _, item := range nonEmpty(strings.Split(s, ",")) {
		key, val, ok := strings.Cut(item, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || key == "" || val == "" {
			return nil, errors.Errorf("%s=%q: %q is not key=value; write e.g. %s=\"preallocate=false,memory_fraction=0.5,visible_devices=0;1\"",
				XLAOptionsEnv, s, item, XLAOptionsEnv)
		}
		if _, dup := opts[key]; dup {
			return nil, errors.Errorf("%s=%q: %s is given twice", XLAOptionsEnv, s, key)
		}
		v, err := parseXLAOption(key, val)
		if err != nil {
			return nil, errors.Wrapf(err, "%s=%q", XLAOptionsEnv, s)
		}
		opts[key] = v
	}
	return opts, nil
}

func parseXLAOption(key, val string) (any, error) {
	switch xlaOptionKinds[key] {
	case "bool":
		b, err := strconv.ParseBool(val)
		if err != nil {
			return nil, errors.Errorf("%s=%s: want true or false", key, val)
		}
		return b, nil
	case "float":
		f, err := strconv.ParseFloat(val, 32)
		if err != nil {
			return nil, errors.Errorf("%s=%s: want a number such as 0.5", key, val)
		}
		if key == "memory_fraction" && (f <= 0 || f > 1) {
			return nil, errors.Errorf("memory_fraction=%s: want a share of the GPU's memory in (0, 1]", val)
		}
		return float32(f), nil
	case "int":
		i, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return nil, errors.Errorf("%s=%s: want an integer", key, val)
		}
		return i, nil
	case "list":
		l, err := parseIntList(val)
		if err != nil {
			return nil, errors.Errorf("%s=%s: want device ordinals separated by \";\", e.g. 0;1", key, val)
		}
		return l, nil
	case "string":
		return val, nil
	}
	if b, err := strconv.ParseBool(val); err == nil && !strings.ContainsAny(val, "0123456789") {
		return b, nil
	}
	if i, err := strconv.ParseInt(val, 10, 64); err == nil {
		return i, nil
	}
	if f, err := strconv.ParseFloat(val, 32); err == nil {
		return float32(f), nil
	}
	if l, err := parseIntList(val); err == nil && strings.Contains(val, ";") {
		return l, nil
	}
	return val, nil
}

func parseIntList(s string) ([]int64, error) {
	var l []int64
	for _, p := range strings.Split(s, ";") {
		i, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil {
			return nil, err
		}
		l = append(l, i)
	}
	return l, nil
}

// SetXLAOption returns the PROTOLAB_XLA_OPTIONS value opts with key set to value (replacing an earlier value of key),
// written back by FormatXLAOptions; an opts that ParseXLAOptions refuses is an error.
func SetXLAOption(opts, key string, value any) (string, error) {
	m, err := ParseXLAOptions(opts)
	if err != nil {
		return "", err
	}
	m[key] = value
	return FormatXLAOptions(m), nil
}

// FormatXLAOptions writes options in PROTOLAB_XLA_OPTIONS's syntax, keys sorted.
func FormatXLAOptions(opts map[string]any) string {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := opts[k]
		if l, ok := v.([]int64); ok {
			s := make([]string, len(l))
			for j, x := range l {
				s[j] = strconv.FormatInt(x, 10)
			}
			v = strings.Join(s, ";")
		}
		parts[i] = fmt.Sprintf("%s=%v", k, v)
	}
	return strings.Join(parts, ",")
}
