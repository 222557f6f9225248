package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/pkg/errors"
	"github.com/stretchr/testify/require"
)

// fakeHost is a machine made of temporary folders: a home, a system root, environment variables and a GPU switch.
type fakeHost struct {
	t    *testing.T
	home string
	root string
	env  map[string]string
	gpu  bool
}

func newFakeHost(t *testing.T) *fakeHost {
	dir := t.TempDir()
	return &fakeHost{t: t, home: filepath.Join(dir, "home"), root: filepath.Join(dir, "usr-local"), env: map[string]string{}}
}

// plugin creates an (empty) plugin file at rel under dir and returns its path.
func (h *fakeHost) plugin(dir, rel string) string {
	path := filepath.Join(dir, rel)
	require.NoError(h.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(h.t, os.WriteFile(path, []byte("not a real plugin"), 0o644))
	return path
}

func (h *fakeHost) search() pluginSearch {
	return pluginSearch{
		getenv: func(k string) (string, bool) { v, ok := h.env[k]; return v, ok },
		home:   h.home, roots: []string{h.root}, gpu: func() bool { return h.gpu },
	}
}

// selector builds a selector over the fake host whose backends are recorded, not started: an XLA start fails with
// xlaErr when set; any other configuration starts the real go backend.
func (h *fakeHost) selector(xlaBuilt bool, xlaErr error, started *[]string) selector {
	return selector{search: h.search(), xlaBuilt: xlaBuilt,
		newXLA: func(cfg string, opts map[string]any) (compute.Backend, error) {
			*started = append(*started, "xla:"+cfg+" "+FormatXLAOptions(opts))
			if xlaErr != nil {
				return nil, xlaErr
			}
			return newBackend(GoBackendConfig) // stands in for the plugin
		},
		newOther: func(cfg string) (compute.Backend, error) {
			*started = append(*started, cfg)
			return newBackend(cfg)
		}}
}

func (h *fakeHost) choose(xlaBuilt bool) (choice, error) {
	var started []string
	return h.selector(xlaBuilt, nil, &started).choose()
}

// TestChoose_GoBackendSettings checks that a plain "go" becomes GoBackendConfig, with a reason that says how to
// choose otherwise, and that "go:…" with options and unknown names are used as given.
func TestChoose_GoBackendSettings(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"go", GoBackendConfig},
		{"go:parallelism=4", "go:parallelism=4"},
		{"go:ops_sequential", "go:ops_sequential"},
		{GoBackendConfig, GoBackendConfig},
		{"nosuch", "nosuch"}, // gomlx names the known backends when it is started (TestOpen_Errors)
	} {
		h := newFakeHost(t)
		h.plugin(h.home, ".local/lib/go-xla/pjrt_c_api_cpu_plugin.so") // installed, but the variable wins
		h.env["GOMLX_BACKEND"] = tc.env
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, tc.want, c.config, "GOMLX_BACKEND=%q", tc.env)
		require.False(t, c.xla)
		if tc.env == "go" {
			require.Contains(t, c.why, "GOMLX_BACKEND=go read as go:parallelism=-1")
			require.Contains(t, c.why, "deadlock")
			require.Contains(t, c.why, "GOMLX_BACKEND=go:parallelism=N")
		} else {
			require.Equal(t, "set by GOMLX_BACKEND", c.why)
		}
	}
}

// TestChoose_Auto covers every branch of the choice with $GOMLX_BACKEND unset, over fake plugin folders.
func TestChoose_Auto(t *testing.T) {
	t.Run("no XLA in this binary", func(t *testing.T) {
		h := newFakeHost(t)
		h.plugin(h.home, ".local/lib/go-xla/pjrt_c_api_cpu_plugin.so")
		c, err := h.choose(false)
		require.NoError(t, err)
		require.Equal(t, GoBackendConfig, c.config)
		require.Contains(t, c.why, "no XLA backend (built with -tags noxla")
	})
	t.Run("no plugin", func(t *testing.T) {
		h := newFakeHost(t)
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, GoBackendConfig, c.config)
		require.Contains(t, c.why, "no usable PJRT plugin installed (0 found")
	})
	t.Run("CPU plugin in the user's go-xla folder", func(t *testing.T) {
		h := newFakeHost(t)
		p := h.plugin(h.home, ".local/lib/go-xla/pjrt_c_api_cpu_plugin.so")
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, "xla:"+p, c.config, "the plugin goes by its path, so gomlx never downloads one")
		require.True(t, c.xla && c.auto)
		require.Contains(t, c.why, `PJRT plugin "cpu" found at `+p)
		require.Empty(t, c.xlaFlags)
	})
	t.Run("CUDA and CPU plugins, no GPU", func(t *testing.T) {
		h := newFakeHost(t)
		h.plugin(h.root, "lib/go-xla/pjrt_c_api_cuda_plugin.so")
		cpu := h.plugin(h.root, "lib/go-xla/pjrt_c_api_cpu_plugin.so")
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, "xla:"+cpu, c.config)
		require.Contains(t, c.why, "passed over: no NVIDIA GPU")
	})
	t.Run("CUDA plugin only, no GPU", func(t *testing.T) {
		h := newFakeHost(t)
		h.plugin(h.root, "lib/go-xla/pjrt_c_api_cuda_plugin.so")
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, GoBackendConfig, c.config)
		require.Contains(t, c.why, "(1 found")
		require.Contains(t, c.why, "passed over: no NVIDIA GPU")
	})
	t.Run("an unknown plugin is not taken unasked", func(t *testing.T) {
		h := newFakeHost(t)
		h.plugin(h.home, ".local/lib/go-xla/pjrt-plugin-mystery.so")
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, GoBackendConfig, c.config)
	})
	t.Run("CUDA plugin with a GPU and an nvidia folder beside it", func(t *testing.T) {
		h := newFakeHost(t)
		h.gpu = true
		h.plugin(h.home, ".local/lib/go-xla/pjrt_c_api_cpu_plugin.so")
		cuda := h.plugin(h.home, ".local/lib/go-xla/nvidia/pjrt_c_api_cuda_plugin.so")
		nvidia := filepath.Join(h.home, ".local/lib/go-xla/nvidia")
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, "xla:"+cuda, c.config)
		require.Equal(t, "--xla_gpu_cuda_data_dir="+filepath.Join(h.home, ".local/lib/go-xla/nvidia"), c.xlaFlags)
		require.DirExists(t, nvidia)
		require.Contains(t, c.why, "XLA_FLAGS=--xla_gpu_cuda_data_dir=")

		h.env["XLA_FLAGS"] = "--xla_dump_to=/tmp/d" // other flags are kept
		c, err = h.choose(true)
		require.NoError(t, err)
		require.Equal(t, "--xla_dump_to=/tmp/d --xla_gpu_cuda_data_dir="+nvidia, c.xlaFlags)

		h.env["XLA_FLAGS"] = "--xla_gpu_cuda_data_dir=/opt/cuda" // the user's own choice is left alone
		c, err = h.choose(true)
		require.NoError(t, err)
		require.Empty(t, c.xlaFlags)
	})
	t.Run("pip-installed JAX CUDA plugin in a virtualenv", func(t *testing.T) {
		h := newFakeHost(t)
		h.gpu = true
		venv := filepath.Join(h.home, "venv")
		h.env["VIRTUAL_ENV"] = venv
		jax := h.plugin(venv, "lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so")
		h.plugin(venv, "lib/python3.12/site-packages/jax_plugins/other/xla_cuda_plugin.so") // not a plugin folder
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, "xla:"+jax, c.config)
		require.Contains(t, c.why, `PJRT plugin "cuda13"`)
		require.Equal(t, []Plugin{{Name: "cuda13", Path: jax}}, h.search().find())
	})
	t.Run("PJRT_PLUGIN_LIBRARY_PATH replaces the default folders", func(t *testing.T) {
		h := newFakeHost(t)
		h.plugin(h.home, ".local/lib/go-xla/pjrt_c_api_cpu_plugin.so")
		mine := filepath.Join(h.home, "mine")
		p := h.plugin(mine, "pjrt_plugin_cpu.so")
		h.env[PluginPathsEnv] = "::" + mine + ":"
		require.Equal(t, []string{mine}, h.search().dirs())
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, "xla:"+p, c.config)
	})
	t.Run("LD_LIBRARY_PATH: absolute entries only, first folder wins", func(t *testing.T) {
		h := newFakeHost(t)
		a, b := filepath.Join(h.home, "a"), filepath.Join(h.home, "b")
		pa := h.plugin(a, "pjrt_c_api_cpu_plugin.so")
		h.plugin(b, "pjrt_c_api_cpu_plugin.so")
		h.env["LD_LIBRARY_PATH"] = "relative/dir:" + a + ":" + b
		require.NotContains(t, h.search().dirs(), "relative/dir")
		require.Equal(t, []Plugin{{Name: "cpu", Path: pa}}, h.search().find())
	})
	t.Run("client options", func(t *testing.T) {
		h := newFakeHost(t)
		h.plugin(h.home, ".local/lib/go-xla/pjrt_c_api_cpu_plugin.so")
		h.env[XLAOptionsEnv] = "preallocate=false,memory_fraction=0.5,visible_devices=1"
		c, err := h.choose(true)
		require.NoError(t, err)
		require.Equal(t, map[string]any{"preallocate": false, "memory_fraction": float32(0.5),
			"visible_devices": []int64{1}}, c.options)
		require.Contains(t, c.why, "client options memory_fraction=0.5,preallocate=false,visible_devices=1 from PROTOLAB_XLA_OPTIONS")
		c, err = h.choose(false)
		require.NoError(t, err)
		require.Nil(t, c.options)
		require.Contains(t, c.why, "PROTOLAB_XLA_OPTIONS ignored")
		h.env[XLAOptionsEnv] = "preallocate"
		_, err = h.choose(true)
		require.ErrorContains(t, err, `PROTOLAB_XLA_OPTIONS="preallocate": "preallocate" is not key=value`)
	})
}

// TestChoose_ExplicitXLA covers $GOMLX_BACKEND naming the XLA backend.
func TestChoose_ExplicitXLA(t *testing.T) {
	h := newFakeHost(t)
	h.env["GOMLX_BACKEND"] = "xla:cuda"
	_, err := h.choose(false)
	require.ErrorContains(t, err, "GOMLX_BACKEND=xla:cuda asks for XLA, but this binary was built without the XLA backend")
	require.ErrorContains(t, err, "(`make build`; README")

	c, err := h.choose(true)
	require.NoError(t, err)
	require.Equal(t, "xla:cuda", c.config, "honoured as given")
	require.False(t, c.auto, "an explicit request never falls back")
	require.Contains(t, c.why, "gomlx downloads the plugin if it is missing (set GOMLX_NO_AUTO_INSTALL=1 to forbid)")
	h.env["GOMLX_NO_AUTO_INSTALL"] = "1"
	c, err = h.choose(true)
	require.NoError(t, err)
	require.Equal(t, "set by GOMLX_BACKEND", c.why)

	// A plugin named (or, for a bare "xla", the CUDA plugin gomlx prefers on a GPU machine) that ProtoLab's search
	// finds gets the XLA_FLAGS workaround too.
	h.gpu = true
	h.plugin(h.home, ".local/lib/go-xla/nvidia/pjrt_c_api_cuda_plugin.so")
	for _, env := range []string{"xla:cuda", "xla", "xla:cuda,tf32"} {
		h.env["GOMLX_BACKEND"] = env
		c, err = h.choose(true)
		require.NoError(t, err)
		require.Equal(t, env, c.config)
		require.Equal(t, "--xla_gpu_cuda_data_dir="+filepath.Join(h.home, ".local/lib/go-xla/nvidia"), c.xlaFlags, env)
	}
	h.env["GOMLX_BACKEND"] = "xla:cpu" // not the CUDA plugin
	c, err = h.choose(true)
	require.NoError(t, err)
	require.Empty(t, c.xlaFlags)
	h.gpu = false

	missing := filepath.Join(h.home, "nowhere", "xla_cuda_plugin.so")
	h.env["GOMLX_BACKEND"] = "xla:" + missing + ",tf32"
	_, err = h.choose(true)
	require.ErrorContains(t, err, "GOMLX_BACKEND=xla:"+missing+",tf32: there is no plugin file at "+missing)
	h.env["GOMLX_BACKEND"] = "xla:" + h.home // a folder is not a plugin
	_, err = h.choose(true)
	require.ErrorContains(t, err, "there is no plugin file at")

	// A plugin by path, outside every searched folder (the pip-installed JAX plugin), with its nvidia folder.
	jax := h.plugin(h.home, "venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so")
	require.NoError(t, os.MkdirAll(filepath.Join(h.home, "venv/lib/python3.12/site-packages/jax_plugins/nvidia"), 0o755))
	h.env["GOMLX_BACKEND"] = "stablehlo:" + jax
	c, err = h.choose(true)
	require.NoError(t, err)
	require.Equal(t, "stablehlo:"+jax, c.config)
	require.True(t, c.xla)
	require.Contains(t, c.xlaFlags, "--xla_gpu_cuda_data_dir=")
}

// TestOpen checks what starts, the fallback of an automatic choice whose plugin fails, and the errors.
func TestOpen(t *testing.T) {
	t.Run("automatic plugin starts with its path and options", func(t *testing.T) {
		h := newFakeHost(t)
		p := h.plugin(h.home, ".local/lib/go-xla/pjrt_c_api_cpu_plugin.so")
		h.env[XLAOptionsEnv] = "visible_devices=0;1"
		var started []string
		_, cfg, line, err := h.selector(true, nil, &started).open()
		require.NoError(t, err)
		require.Equal(t, "xla:"+p, cfg)
		require.Equal(t, []string{"xla:" + p + " visible_devices=0;1"}, started)
		require.True(t, strings.HasPrefix(line, "protolab: backend xla:"+p+" ("), line)
		require.Contains(t, line, `): PJRT plugin "cpu" found at`)
		require.True(t, strings.HasSuffix(line, "\n") && strings.Count(line, "\n") == 1, "one line")
	})
	t.Run("a CUDA plugin's XLA_FLAGS are set before it loads", func(t *testing.T) {
		t.Setenv("XLA_FLAGS", "") // restored afterwards
		h := newFakeHost(t)
		h.gpu = true
		h.plugin(h.root, "lib/go-xla/nvidia/pjrt_c_api_cuda_plugin.so")
		var started []string
		var flagsAtStart string
		s := h.selector(true, nil, &started)
		newXLA := s.newXLA
		s.newXLA = func(cfg string, opts map[string]any) (compute.Backend, error) {
			flagsAtStart = os.Getenv("XLA_FLAGS")
			return newXLA(cfg, opts)
		}
		_, _, _, err := s.open()
		require.NoError(t, err)
		require.Equal(t, "--xla_gpu_cuda_data_dir="+filepath.Join(h.root, "lib/go-xla/nvidia"), flagsAtStart)
	})
	t.Run("automatic plugin that fails falls back to go, and says so", func(t *testing.T) {
		h := newFakeHost(t)
		p := h.plugin(h.home, ".local/lib/go-xla/pjrt_c_api_cpu_plugin.so")
		var started []string
		b, cfg, line, err := h.selector(true, errors.New("dlopen: invalid ELF header\nmore"), &started).open()
		require.NoError(t, err)
		require.NotNil(t, b)
		require.Equal(t, GoBackendConfig, cfg)
		require.Equal(t, []string{"xla:" + p + " ", GoBackendConfig}, started)
		require.Contains(t, line, "protolab: backend go:parallelism=-1 (")
		require.Contains(t, line, "failed to start: the XLA backend xla:"+p+" (chosen because the plugin was found) cannot start")
		require.Contains(t, line, "dlopen: invalid ELF header; set GOMLX_BACKEND=xla:"+p+" to insist on it")
	})
	t.Run("explicit plugin that fails is an error naming the fix", func(t *testing.T) {
		h := newFakeHost(t)
		p := h.plugin(h.home, "plugins/pjrt_c_api_cpu_plugin.so")
		h.env["GOMLX_BACKEND"] = "xla:" + p
		var started []string
		_, _, _, err := h.selector(true, errors.New("dlopen failed"), &started).open()
		require.ErrorContains(t, err, "the XLA backend xla:"+p+" (set by GOMLX_BACKEND) cannot start")
		require.ErrorContains(t, err, "GOMLX_BACKEND=go:parallelism=-1 for the pure-Go backend: dlopen failed")
		require.Equal(t, []string{"xla:" + p + " "}, started, "no fallback")
	})
	t.Run("unknown backend name", func(t *testing.T) {
		h := newFakeHost(t)
		h.env["GOMLX_BACKEND"] = "nosuch"
		var started []string
		_, _, _, err := h.selector(true, nil, &started).open()
		require.ErrorContains(t, err, "GOMLX_BACKEND=nosuch")
		require.ErrorContains(t, err, "known: ")
	})
	t.Run("go backend line", func(t *testing.T) {
		h := newFakeHost(t)
		var started []string
		_, cfg, line, err := h.selector(false, nil, &started).open()
		require.NoError(t, err)
		require.Equal(t, GoBackendConfig, cfg)
		require.Regexp(t, `^protolab: backend go:parallelism=-1 \(.*\): this binary has no XLA backend`, line)
	})
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
