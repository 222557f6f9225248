package run

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/simplego" // the pure-Go backend, always available
	"github.com/pkg/errors"

	_ "github.com/protolab/protolab/workbench/gradfix" // ProtoLab's gradient rules, installed on import
)

// GoBackendConfig is the pure-Go backend configuration ProtoLab uses by default. Unlimited parallelism avoids the
// worker-pool deadlock of gomlx v0.26.0's SimpleGo on machines with few cores (GOMLX_NOTES.md §0.3) and is the fastest.
const GoBackendConfig = "go:parallelism=-1"

var (
	backendOnce sync.Once
	backend     backends.Backend
	backendCfg  string
	backendErr  error
)

// BackendConfig returns the configuration Backend uses, the one provenance records: $GOMLX_BACKEND when set, except
// that a plain "go" (no options) means GoBackendConfig; otherwise "xla" when this binary includes the XLA backend and
// a PJRT plugin is installed; otherwise GoBackendConfig. A "go:…" with explicit options is used as given.
func BackendConfig() string {
	cfg, _ := backendChoice()
	return cfg
}

// backendChoice returns BackendConfig's answer and, when it differs from $GOMLX_BACKEND, why ("" otherwise).
func backendChoice() (cfg, why string) {
	env, ok := os.LookupEnv(backends.ConfigEnvVar)
	switch {
	case ok && env == "go":
		// SimpleGo's default worker pool (2·NumCPU slots) can deadlock on few cores when nested DotGenerals wait for
		// slots their callers hold (GOMLX_NOTES.md §0.3); unlimited parallelism cannot, and is the fastest.
		return GoBackendConfig, fmt.Sprintf("%s=go read as %s: gomlx v0.26.0's default worker pool can deadlock on "+
			"few cores; set %s=go:parallelism=N (or go:ops_sequential) to choose otherwise",
			backends.ConfigEnvVar, GoBackendConfig, backends.ConfigEnvVar)
	case ok && env != "":
		return env, ""
	case len(xlaPlugins()) > 0:
		return "xla", ""
	}
	return GoBackendConfig, ""
}

// Backend returns the process-wide backend chosen by BackendConfig, creating it on the first call and printing the
// choice once to stderr, together with the reason when it differs from $GOMLX_BACKEND. It returns an error (not a
// panic) when the configured backend cannot be created, e.g. an unknown name in $GOMLX_BACKEND or a missing XLA
// plugin.
func Backend() (backends.Backend, error) {
	backendOnce.Do(func() {
		var why string
		backendCfg, why = backendChoice()
		backend, backendErr = newBackend(backendCfg)
		if backendErr == nil {
			if why != "" {
				why = "; " + why
			}
			line := fmt.Sprintf("protolab: backend %s (%s)%s\n", backendCfg, backend.Description(), why)
			if !shownInNotebook(line) {
				fmt.Fprint(os.Stderr, line)
			}
		}
	})
	return backend, backendErr
}

// MustBackend is Backend for notebooks and examples: it panics on error.
func MustBackend() backends.Backend {
	b, err := Backend()
	if err != nil {
		panic(err)
	}
	return b
}

// BackendName returns the configuration string of the backend Backend created ("" before the first call).
func BackendName() string { return backendCfg }

// newBackend turns gomlx's panics on unknown backends into errors.
func newBackend(cfg string) (b backends.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("backend %q: %v (known: %v; set %s, e.g. %q)", cfg, r, backends.List(),
				backends.ConfigEnvVar, GoBackendConfig)
		}
	}()
	// SimpleGo prints "SimpleGo backend: parallelism set to N" to stdout; the line Backend prints says it already.
	stdout := os.Stdout
	if null, err := os.Open(os.DevNull); err == nil {
		os.Stdout = null
		defer func() { os.Stdout = stdout; null.Close() }()
	}
	b, err = backends.NewWithConfig(cfg)
	if err != nil {
		return nil, errors.Wrapf(err, "backend %q", cfg)
	}
	return b, nil
}

// notebookMarker returns the file that records the backend line shown in this notebook session, "" outside GoNB.
// GoNB runs every cell as a new process, built in the kernel's own temporary folder (a new one for each kernel), and
// sets $GONB_PIPE for it; the marker lives in that folder, so a restarted kernel prints the line again. Tests replace
// it.
var notebookMarker = func() string {
	if os.Getenv("GONB_PIPE") == "" {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return filepath.Join(filepath.Dir(exe), ".protolab-backend")
}

// shownInNotebook reports whether line was already shown by an earlier cell of this notebook session, and records
// it otherwise: the backend line then appears once per notebook, and again only when the backend changes.
func shownInNotebook(line string) bool {
	path := notebookMarker()
	if path == "" {
		return false
	}
	if old, err := os.ReadFile(path); err == nil && string(old) == line {
		return true
	}
	_ = os.WriteFile(path, []byte(line), 0o644) // best effort: at worst the line shows again
	return false
}
