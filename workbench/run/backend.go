package run

import (
	"fmt"
	"os"
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

// BackendConfig returns the configuration Backend uses: $GOMLX_BACKEND when set; otherwise "xla" when this binary
// includes the XLA backend and a PJRT plugin is installed; otherwise GoBackendConfig.
func BackendConfig() string {
	if cfg, ok := os.LookupEnv(backends.ConfigEnvVar); ok && cfg != "" {
		return cfg
	}
	if len(xlaPlugins()) > 0 {
		return "xla"
	}
	return GoBackendConfig
}

// Backend returns the process-wide backend chosen by BackendConfig, creating it on the first call and printing the
// choice once to stderr. It returns an error (not a panic) when the configured backend cannot be created, e.g. an
// unknown name in $GOMLX_BACKEND or a missing XLA plugin.
func Backend() (backends.Backend, error) {
	backendOnce.Do(func() {
		backendCfg = BackendConfig()
		backend, backendErr = newBackend(backendCfg)
		if backendErr == nil {
			fmt.Fprintf(os.Stderr, "protolab: backend %s (%s)\n", backendCfg, backend.Description())
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
	b, err = backends.NewWithConfig(cfg)
	if err != nil {
		return nil, errors.Wrapf(err, "backend %q", cfg)
	}
	return b, nil
}
