package run

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBackendConfig_PlainGoMeansSafeParallelism checks that a plain "go" becomes GoBackendConfig, with a reason that
// says how to choose otherwise, and that any other setting, "go:…" with options included, is used as given.
func TestBackendConfig_PlainGoMeansSafeParallelism(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"go", GoBackendConfig},
		{"go:parallelism=4", "go:parallelism=4"},
		{"go:parallelism=0", "go:parallelism=0"},
		{"go:ops_sequential", "go:ops_sequential"},
		{GoBackendConfig, GoBackendConfig},
		{"xla:cpu", "xla:cpu"},
		{"", GoBackendConfig}, // unset in effect; the noxla test build has no XLA plugin to prefer
	} {
		t.Setenv("GOMLX_BACKEND", tc.env)
		require.Equal(t, tc.want, BackendConfig(), "GOMLX_BACKEND=%q", tc.env)
		cfg, why := backendChoice()
		require.Equal(t, tc.want, cfg, "GOMLX_BACKEND=%q", tc.env)
		if tc.env == "go" {
			require.Contains(t, why, "GOMLX_BACKEND=go read as go:parallelism=-1")
			require.Contains(t, why, "deadlock")
			require.Contains(t, why, "GOMLX_BACKEND=go:parallelism=N")
		} else {
			require.Empty(t, why, "GOMLX_BACKEND=%q is used as given, so there is nothing to explain", tc.env)
		}
	}
}
