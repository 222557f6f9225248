package data_test

import (
	"fmt"

	"github.com/protolab/protolab/workbench/data"
)

func ExampleSynthetic() {
	cfg := data.DefaultSyntheticConfig()
	cfg.NumDocs = 1
	c, err := data.Synthetic(cfg)
	if err != nil {
		fmt.Printf("%+v\n", err)
		return
	}
	l := c.Labels[0]
	first := l.Sentences[0]
	fmt.Println(c.Texts[0][first.Start:first.End])
	for ci, k := range c.Concepts {
		if v := first.Values[ci]; v >= 0 {
			fmt.Printf("%s=%s ", k.Name, k.Values[v])
		}
	}
	fmt.Println()
	// Output:
	// Sarah is a sister from Cairo.
	// gender=female country=Egypt number=singular agreement=d1
}

func ExampleBatcher() {
	packed, err := data.Pack([][]int32{{1, 2, 3}, {4, 5, 6, 7}}, 3, 0) // stream 1 2 3 0 4 5 6 7 0
	if err != nil {
		fmt.Printf("%+v\n", err)
		return
	}
	b, err := data.NewBatcher(packed, data.BatcherConfig{BatchSize: 2})
	if err != nil {
		fmt.Printf("%+v\n", err)
		return
	}
	batch := b.Next()
	fmt.Println(batch.Inputs(), batch.Targets(), b.Cursor().Position)
	// Output: [[1 2 3] [0 4 5]] [[2 3 0] [4 5 6]] 2
}
