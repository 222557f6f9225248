package run

import (
	"os"
	"path/filepath"

	"github.com/pkg/errors"
)

// Environment variables notebooks and `make run`/`make test` use.
const (
	PresetEnv = "PROTOLAB_PRESET" // tiny|small|paper; the preset notebooks run
	OutEnv    = "PROTOLAB_OUT"    // folder for runs and figures of notebooks
)

// PresetName returns the preset $PROTOLAB_PRESET names, "small" when it is unset or empty. Any other value than
// tiny, small and paper is an error naming the variable and its value.
func PresetName() (string, error) {
	switch p := os.Getenv(PresetEnv); p {
	case "":
		return "small", nil
	case "tiny", "small", "paper":
		return p, nil
	default:
		return "", errors.Errorf("%s=%q is not a preset; set it to tiny, small or paper (or unset it for small)",
			PresetEnv, p)
	}
}

// FromEnv returns the preset PresetName names, built by preset (a study's Preset function); an invalid
// $PROTOLAB_PRESET is PresetName's error. Notebooks and `make run` select their preset this way.
func FromEnv[C any](preset func(name string) (C, error)) (C, error) {
	name, err := PresetName()
	if err != nil {
		var zero C
		return zero, err
	}
	return preset(name)
}

// SelectPreset returns the preset called name ("tiny", "small" — also "" — or "paper") built by the matching
// function; any other name is an error listing the three.
func SelectPreset[C any](name string, tiny, small, paper func() C) (C, error) {
	switch name {
	case "tiny":
		return tiny(), nil
	case "small", "":
		return small(), nil
	case "paper":
		return paper(), nil
	}
	var zero C
	return zero, errors.Errorf("unknown preset %q; want tiny, small or paper", name)
}

// OutRoot returns the run.Out root that notebooks and the CLI use by default: $PROTOLAB_OUT/runs when PROTOLAB_OUT
// is set (make run, make test, make lab), else "runs" under the working directory. Models go to OutRoot()/models,
// study results to OutRoot()/<study>.
func OutRoot() string {
	if out := os.Getenv(OutEnv); out != "" {
		return filepath.Join(out, "runs")
	}
	return "runs"
}
