package run

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseXLAOptions checks the types of the CUDA plugin's options, inference for other keys, and the errors.
func TestParseXLAOptions(t *testing.T) {
	opts, err := ParseXLAOptions(" preallocate = true , allocator=cuda_async,visible_devices=2;3,node_id=0,mine=1.5," +
		"flag=false,name=abc,ids=4;5,n=7,")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"preallocate": true, "allocator": "cuda_async", "visible_devices": []int64{2, 3},
		"node_id": int64(0), "mine": float32(1.5), "flag": false, "name": "abc", "ids": []int64{4, 5}, "n": int64(7)}, opts)
	require.Equal(t, "allocator=cuda_async,flag=false,ids=4;5,mine=1.5,n=7,name=abc,node_id=0,preallocate=true,visible_devices=2;3",
		FormatXLAOptions(opts))
	set, err := SetXLAOption("visible_devices=5,preallocate=false", "visible_devices", []int64{0})
	require.NoError(t, err)
	require.Equal(t, "preallocate=false,visible_devices=0", set, "replaced, keys sorted")
	_, err = SetXLAOption("oops", "visible_devices", []int64{0})
	require.ErrorContains(t, err, `"oops" is not key=value`)
	empty, err := ParseXLAOptions("")
	require.NoError(t, err)
	require.Empty(t, empty)
	for in, want := range map[string]string{
		"preallocate=maybe":       "preallocate=maybe: want true or false",
		"memory_fraction=1.5":     "memory_fraction=1.5: want a share of the GPU's memory in (0, 1]",
		"memory_fraction=half":    "memory_fraction=half: want a number",
		"visible_devices=0,1":     `"1" is not key=value`,
		"visible_devices=a;b":     "want device ordinals separated by \";\"",
		"node_id=x":               "node_id=x: want an integer",
		"=3":                      `"=3" is not key=value`,
		"a=1,a=2":                 "a is given twice",
		"preallocate=false,oops=": `"oops=" is not key=value`,
	} {
		_, err := ParseXLAOptions(in)
		require.ErrorContains(t, err, want, in)
		require.ErrorContains(t, err, "PROTOLAB_XLA_OPTIONS=", in)
	}
}
