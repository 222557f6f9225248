package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // the pure-Go backend, always available
	"github.com/pkg/errors"

	_ "github.com/protolab/protolab/workbench/gradfix" // ProtoLab's gradient rules, installed on import
)

// GoBackendConfig is the pure-Go backend configuration ProtoLab uses by default. Unlimited parallelism avoids the
// deadlock of the backend's default worker pool (2·NumCPU slots) on machines with few cores, which
// github.com/gomlx/compute v0.1.2 still has: nested DotGenerals wait for slots their callers hold (the README's
// "Backends, GPU and XLA" section gives the evidence).
const GoBackendConfig = "go:parallelism=-1"

// noAutoInstallEnv is gomlx's switch that forbids downloading a PJRT plugin (backends/xla.NoAutoInstallEnv).
const noAutoInstallEnv = "GOMLX_NO_AUTO_INSTALL"

var (
	backendOnce sync.Once
	backend     compute.Backend
	backendCfg  string
	backendErr  error
)

// Backend returns the process-wide backend, creating it on the first call and printing one line to stderr that says
// which backend and why (once per notebook session under GoNB). The rules, in order:
//
//   - $GOMLX_BACKEND, when set, is used as given ("go", "go:parallelism=4", "xla:cuda", "xla:/abs/path/plugin.so"),
//     except that a plain "go" means GoBackendConfig. A named XLA plugin goes through gomlx's own search, which
//     downloads a missing plugin unless $GOMLX_NO_AUTO_INSTALL is set; an absolute path loads that file and nothing
//     else.
//   - Otherwise, when this binary includes the XLA backend (cgo, no noxla tag) and a PJRT plugin is installed (see
//     Plugins), XLA with that plugin, passed by its path, so that nothing is ever downloaded: the CUDA plugin when an
//     NVIDIA GPU is present, else the CPU plugin. If that plugin fails to start, the pure-Go backend, and the line
//     says why.
//   - Otherwise GoBackendConfig.
//
// $PROTOLAB_XLA_OPTIONS sets the XLA plugin's client options (XLAOptionsEnv). A backend that cannot start is an
// error naming the variable to change, never a panic.
func Backend() (compute.Backend, error) {
	backendOnce.Do(func() {
		var line string
		backend, backendCfg, line, backendErr = hostSelector().open()
		if backendErr == nil && !shownInNotebook(line) {
			fmt.Fprint(os.Stderr, line)
		}
	})
	return backend, backendErr
}

// MustBackend is Backend for notebooks and examples: it panics on error.
func MustBackend() compute.Backend {
	b, err := Backend()
	if err != nil {
		panic(err)
	}
	return b
}

// BackendConfig returns the configuration Backend would use, the one provenance records before a backend exists:
// Backend's choice, or $GOMLX_BACKEND as given when that choice is an error.
func BackendConfig() string {
	c, err := hostSelector().choose()
	if err != nil {
		return os.Getenv(compute.ConfigEnvVar)
	}
	return c.config
}

// BackendName returns the configuration string of the backend Backend created ("" before the first call).
func BackendName() string { return backendCfg }

// DescribeBackend says, without starting anything, which backend Backend would take and why, and lists the PJRT
// plugins found on this machine: what `protolab backend` prints.
func DescribeBackend() string {
	s := hostSelector()
	var b strings.Builder
	c, err := s.choose()
	if err != nil {
		fmt.Fprintf(&b, "backend: error: %v\n", err)
	} else {
		fmt.Fprintf(&b, "backend: %s\nwhy: %s\n", c.config, c.why)
	}
	fmt.Fprintf(&b, "this binary includes the XLA backend: %v\n", s.xlaBuilt)
	fmt.Fprintf(&b, "go backend matmul kernels: %s\n", SIMD())
	fmt.Fprintf(&b, "NVIDIA GPU present: %v\n", s.search.gpu())
	plugins := s.search.find()
	fmt.Fprintf(&b, "PJRT plugins found (%d):\n", len(plugins))
	for _, p := range plugins {
		fmt.Fprintf(&b, "  %-8s %s\n", p.Name, p.Path)
	}
	fmt.Fprintf(&b, "folders searched:\n")
	for _, d := range s.search.dirs() {
		fmt.Fprintf(&b, "  %s\n", d)
	}
	return b.String()
}

// Plugins lists the PJRT plugins installed on this machine, in search order (pluginSearch.dirs).
func Plugins() []Plugin { return hostPluginSearch().find() }

// choice is the backend to create and why.
type choice struct {
	config   string         // gomlx's configuration: "go:parallelism=-1", "xla:/abs/plugin.so", "xla:cuda,tf32", ...
	why      string         // the reason, for the backend line
	xla      bool           // an XLA backend (any of gomlx's names for it)
	options  map[string]any // the plugin's client options ($PROTOLAB_XLA_OPTIONS), XLA only
	xlaFlags string         // a value to give $XLA_FLAGS before the plugin loads, "" to leave it
	auto     bool           // chosen by ProtoLab rather than $GOMLX_BACKEND: if it fails, the go backend
}

// selector holds what the choice depends on, so that tests can replace each part.
type selector struct {
	search   pluginSearch
	xlaBuilt bool                                                                 // this binary includes the XLA backend
	newXLA   func(config string, options map[string]any) (compute.Backend, error) // config: what follows "xla:"
	newOther func(config string) (compute.Backend, error)
}

func hostSelector() selector {
	return selector{search: hostPluginSearch(), xlaBuilt: xlaBuilt, newXLA: newXLA, newOther: newBackend}
}

// xlaNames are gomlx's names for the XLA backend (backends/xla/xla.go).
var xlaNames = map[string]bool{"xla": true, "stablehlo": true, "hlo": true, "shlo": true}

// choose applies Backend's rules.
func (s selector) choose() (choice, error) {
	getenv := func(k string) string { v, _ := s.search.getenv(k); return v }
	opts, err := ParseXLAOptions(getenv(XLAOptionsEnv))
	if err != nil {
		return choice{}, err
	}
	env := strings.TrimSpace(getenv(compute.ConfigEnvVar))
	if env == "" {
		return s.chooseAuto(opts), nil
	}
	name, rest, _ := strings.Cut(env, ":")
	if !xlaNames[name] {
		c := choice{config: env, why: "set by " + compute.ConfigEnvVar}
		if env == "go" {
			// The default worker pool (2·NumCPU slots) can deadlock on few cores when nested DotGenerals wait for
			// slots their callers hold (GoBackendConfig); unlimited parallelism cannot.
			c.config = GoBackendConfig
			c.why = fmt.Sprintf("%s=go read as %s: the go backend's default worker pool can deadlock on few cores; "+
				"set %s=go:parallelism=N (or go:ops_sequential) to choose otherwise", compute.ConfigEnvVar,
				GoBackendConfig, compute.ConfigEnvVar)
		}
		if len(opts) > 0 {
			c.why += fmt.Sprintf("; %s ignored: only the XLA backend takes plugin options", XLAOptionsEnv)
		}
		return c, nil
	}
	if !s.xlaBuilt {
		return choice{}, errors.Errorf("%s=%s asks for XLA, but this binary was built without the XLA backend "+
			"(-tags noxla, or CGO_ENABLED=0): build it with cgo and without the noxla tag (`make build`; README, "+
			"\"GPU and XLA\"), or set %s=%s for the pure-Go backend", compute.ConfigEnvVar, env,
			compute.ConfigEnvVar, GoBackendConfig)
	}
	c := choice{config: env, xla: true, options: opts, why: "set by " + compute.ConfigEnvVar}
	plugin, _, _ := strings.Cut(rest, ",")
	if filepath.IsAbs(plugin) {
		if fi, err := os.Stat(plugin); err != nil || fi.IsDir() {
			return choice{}, errors.Errorf("%s=%s: there is no plugin file at %s; give the absolute path of a "+
				"PJRT plugin .so (`protolab backend` lists the plugins found), or unset %s to let ProtoLab choose",
				compute.ConfigEnvVar, env, plugin, compute.ConfigEnvVar)
		}
		c.setCUDAFlags(Plugin{Name: filepath.Base(plugin), Path: plugin}, getenv("XLA_FLAGS"))
	} else {
		if _, forbid := s.search.getenv(noAutoInstallEnv); !forbid {
			c.why += fmt.Sprintf("; gomlx downloads the plugin if it is missing (set %s=1 to forbid)", noAutoInstallEnv)
		}
		for _, p := range s.search.find() {
			if p.Name == plugin || (plugin == "" && p.CUDA() && s.search.gpu()) {
				c.setCUDAFlags(p, getenv("XLA_FLAGS"))
				break
			}
		}
	}
	c.noteOptions()
	return c, nil
}

// chooseAuto is the choice when $GOMLX_BACKEND is unset.
func (s selector) chooseAuto(opts map[string]any) choice {
	goChoice := func(why string) choice {
		if len(opts) > 0 {
			why += fmt.Sprintf("; %s ignored: only the XLA backend takes plugin options", XLAOptionsEnv)
		}
		return choice{config: GoBackendConfig, why: why}
	}
	if !s.xlaBuilt {
		return goChoice("this binary has no XLA backend (built with -tags noxla or without cgo)")
	}
	found := s.search.find()
	p, ok, skipped := s.search.best(found)
	if !ok {
		why := fmt.Sprintf("no usable PJRT plugin installed (%d found; `protolab backend` lists the folders searched; "+
			"README, \"GPU and XLA\", says how to install one)", len(found))
		if skipped != "" {
			why += "; " + skipped
		}
		return goChoice(why)
	}
	c := choice{config: "xla:" + p.Path, xla: true, options: opts, auto: true,
		why: fmt.Sprintf("PJRT plugin %q found at %s (%s=%s chooses the pure-Go backend)", p.Name, p.Path,
			compute.ConfigEnvVar, GoBackendConfig)}
	if skipped != "" {
		c.why += "; " + skipped
	}
	v, _ := s.search.getenv("XLA_FLAGS")
	c.setCUDAFlags(p, v)
	c.noteOptions()
	return c
}

// setCUDAFlags sets --xla_gpu_cuda_data_dir for a CUDA plugin with an nvidia/ folder beside it (cudaDataDir), when
// xlaFlags (the current $XLA_FLAGS) has no such flag. go-xla v0.4.1 sets the same flag to the same folder, but only
// after it has loaded and initialised the plugin (pjrt/dynamiclib_base.go, cudaPluginCheckDrivers); set before, it is
// in place whenever XLA reads its flags, and go-xla leaves a flag that is already there alone. Whether XLA reads
// them early enough for go-xla's own setting to suffice has not been checked on a GPU (scripts/device_check.sh).
func (c *choice) setCUDAFlags(p Plugin, xlaFlags string) {
	if !p.CUDA() || strings.Contains(xlaFlags, "--xla_gpu_cuda_data_dir") {
		return
	}
	if dir := cudaDataDir(p.Path); dir != "" {
		c.xlaFlags = strings.TrimSpace(xlaFlags + " --xla_gpu_cuda_data_dir=" + dir)
		c.why += "; XLA_FLAGS=" + c.xlaFlags + " (set before the plugin loads; go-xla sets it only after)"
	}
}

func (c *choice) noteOptions() {
	if len(c.options) > 0 {
		c.why += fmt.Sprintf("; client options %s from %s", FormatXLAOptions(c.options), XLAOptionsEnv)
	}
}

// open creates the chosen backend and returns it with its configuration and the line to print.
func (s selector) open() (b compute.Backend, cfg, line string, err error) {
	c, err := s.choose()
	if err != nil {
		return nil, "", "", err
	}
	b, err = s.create(c)
	if err != nil && c.auto {
		why := fmt.Sprintf("the PJRT plugin chosen (%s) failed to start: %v; set %s=%s to insist on it",
			c.config, firstLine(err), compute.ConfigEnvVar, c.config)
		c = choice{config: GoBackendConfig, why: why}
		b, err = s.create(c)
	}
	if err != nil {
		return nil, "", "", err
	}
	line = fmt.Sprintf("protolab: backend %s (%s): %s", c.config, b.Description(), c.why)
	if !c.xla {
		line += "; matmul kernels: " + SIMD().String()
	}
	return b, c.config, line + "\n", nil
}

// create starts the backend c names; its errors name the variable to change.
func (s selector) create(c choice) (compute.Backend, error) {
	if !c.xla {
		return s.newOther(c.config)
	}
	if c.xlaFlags != "" {
		if err := os.Setenv("XLA_FLAGS", c.xlaFlags); err != nil {
			return nil, errors.Wrap(err, "setting XLA_FLAGS")
		}
	}
	_, rest, _ := strings.Cut(c.config, ":")
	b, err := s.newXLA(rest, c.options)
	if err != nil {
		how := "set by " + compute.ConfigEnvVar
		if c.auto {
			how = "chosen because the plugin was found"
		}
		return nil, errors.Wrapf(err, "the XLA backend %s (%s) cannot start; check the plugin and the GPU driver "+
			"(`protolab backend` lists the plugins found), point %s=xla:/abs/path/plugin.so at another plugin, or set "+
			"%s=%s for the pure-Go backend", c.config, how, compute.ConfigEnvVar, compute.ConfigEnvVar, GoBackendConfig)
	}
	return b, nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// newBackend creates a non-XLA backend, turning gomlx's panics on unknown names into errors.
func newBackend(cfg string) (b compute.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.Errorf("%s=%s: %v (known: %v); set %s to one of them, e.g. %q", compute.ConfigEnvVar, cfg,
				r, compute.List(), compute.ConfigEnvVar, GoBackendConfig)
		}
	}()
	// The go backend prints "Go backend: parallelism set to N" to stdout; the line Backend prints says it already.
	stdout := os.Stdout
	if null, err := os.Open(os.DevNull); err == nil {
		os.Stdout = null
		defer func() { os.Stdout = stdout; null.Close() }()
	}
	b, err = compute.NewWithConfig(cfg)
	if err != nil {
		return nil, errors.Wrapf(err, "%s=%s cannot start; set %s=%s for the pure-Go backend", compute.ConfigEnvVar,
			cfg, compute.ConfigEnvVar, GoBackendConfig)
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
