package run

import (
	"os"
	"path/filepath"
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

// TestShownInNotebook_OncePerSession checks that the backend line is shown by the first cell of a notebook session
// only, again when it changes, and always outside a notebook.
func TestShownInNotebook_OncePerSession(t *testing.T) {
	marker := filepath.Join(t.TempDir(), ".protolab-backend")
	old := notebookMarker
	t.Cleanup(func() { notebookMarker = old })
	notebookMarker = func() string { return marker }
	line := "protolab: backend go:parallelism=-1 (SimpleGo)\n"
	require.False(t, shownInNotebook(line)) // first cell
	require.True(t, shownInNotebook(line))  // later cells
	require.False(t, shownInNotebook("protolab: backend xla:cpu (XLA)\n"))
	notebookMarker = func() string { return "" } // not in a notebook
	require.False(t, shownInNotebook(line))
	require.False(t, shownInNotebook(line))
}

func TestNotebookMarker_OnlyUnderGoNB(t *testing.T) {
	t.Setenv("GONB_PIPE", "")
	require.Empty(t, notebookMarker())
	t.Setenv("GONB_PIPE", "/tmp/pipe")
	exe, err := os.Executable()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(filepath.Dir(exe), ".protolab-backend"), notebookMarker())
}
