package store_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/store"
)

func ExampleSave() {
	dir, _ := os.MkdirTemp("", "store-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "weights.safetensors")

	w := tensors.FromFlatDataAndDimensions([]float32{1, 2, 3, 4, 5, 6}, 2, 3) // a Dense layer: [in=2, out=3]
	err := store.Save(path, map[string]*tensors.Tensor{"head.dense.weights": w}, map[string]string{"seed": "42"})
	if err != nil {
		fmt.Printf("%+v\n", err)
		return
	}
	loaded, meta, err := store.Load(path)
	if err != nil {
		fmt.Printf("%+v\n", err)
		return
	}
	fmt.Println(loaded["head.dense.weights"].Shape(), tensors.MustCopyFlatData[float32](loaded["head.dense.weights"]))
	fmt.Println(meta["seed"])
	// Output:
	// (Float32)[2, 3] [1 2 3 4 5 6]
	// 42
}

func ExampleName() {
	key, _ := store.Name("/block_00/ffn", "up") // the decoder's FFN up-projection
	scope, name, _ := store.SplitName(key)
	fmt.Println(key)
	fmt.Println(scope, name)
	// Output:
	// block_00.ffn.up
	// /block_00/ffn up
}
