package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/models/lm"
)

// cmdExport writes a trained run folder's model as one PyTorch-oriented safetensors file (lm.Model.Export; layout
// in models/lm/doc.go, "PyTorch export"; models/lm/pytorch/protolab_lm.py loads it).
func cmdExport(args []string, stdout io.Writer) error {
	fs := newFlags("export", "--out RUN_DIR --to FILE.safetensors", stdout)
	out := fs.String("out", "", "a folder written by protolab train (required)")
	to := fs.String("to", "", "the file to write (required); written atomically, replacing an existing file")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	if *out == "" || *to == "" {
		return errors.New("export: --out RUN_DIR and --to FILE.safetensors are required")
	}
	if filepath.Ext(*to) != ".safetensors" {
		return errors.Errorf("export: --to %s, want a file name ending in .safetensors", *to)
	}
	m, err := lm.Open(*out)
	if err != nil {
		return err
	}
	if err := m.Export(*to); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "exported %s (%s, %s head, %d layers) to %s; load it in PyTorch with "+
		"models/lm/pytorch/protolab_lm.py\n", *out, m.Config.Model.Mixer, m.Config.Resolved().Head,
		m.Config.Model.NumLayers, *to)
	return nil
}
