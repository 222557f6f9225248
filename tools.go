//go:build tools

// Package tools pins the modules ProtoLab packages import while they are being written; go mod tidy keeps them.
package tools

import (
	_ "github.com/chromedp/chromedp"
	_ "github.com/go-echarts/go-echarts/v2/charts"
	_ "github.com/gomlx/compute/gobackend"
	_ "github.com/gomlx/go-huggingface/hub"
	_ "github.com/gomlx/gomlx/core/graph"
	_ "github.com/gomlx/gomlx/ml/model"
	_ "github.com/gomlx/gomlx/ml/model/checkpoint"
	_ "github.com/gomlx/gomlx/ml/train"
	_ "github.com/janpfeifer/gonb/gonbui"
	_ "github.com/parquet-go/parquet-go"
	_ "github.com/pkg/errors"
	_ "github.com/stretchr/testify/require"
	_ "gonum.org/v1/gonum/diff/fd"
)
