package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Plugin is a PJRT plugin file found on this machine: what the XLA backend loads to run on a CPU, a GPU or a TPU.
type Plugin struct {
	Name string // from the file name: "cpu", "cuda", "cuda13" (a pip-installed JAX plugin), ...
	Path string // absolute path of the .so file
}

// CUDA reports whether the plugin drives NVIDIA GPUs (go-xla's own test: the name mentions cuda or nvidia).
func (p Plugin) CUDA() bool {
	n := strings.ToLower(p.Name)
	return strings.Contains(n, "cuda") || strings.Contains(n, "nvidia")
}

// PluginPathsEnv is go-xla's list of folders to search for plugins (":"-separated); when set, only they are searched.
const PluginPathsEnv = "PJRT_PLUGIN_LIBRARY_PATH"

// pluginNames are go-xla's file-name patterns (pkg/pjrt/dynamiclib_base.go) plus the name a pip-installed JAX CUDA
// plugin has (jax_plugins/xla_cuda13/xla_cuda_plugin.so), which go-xla's search does not recognise.
var pluginNames = []*regexp.Regexp{
	regexp.MustCompile(`^pjrt_c_api_(.+)_plugin\.so$`),
	regexp.MustCompile(`^pjrt[-_]plugin[-_](.+)\.so$`),
}

var jaxPluginDir = regexp.MustCompile(`^xla_(cuda\d*|rocm\d*|tpu)$`)

// pluginSearch says where to look for plugins and whether a GPU is present. The zero value is not useful: use
// hostPluginSearch; tests build one over fake folders.
type pluginSearch struct {
	getenv func(string) (string, bool)
	home   string      // the user's home folder ("" when unknown)
	roots  []string    // system folders holding lib/… and python site-packages (default "/usr/local", "/usr")
	gpu    func() bool // whether an NVIDIA GPU is present
}

// hostPluginSearch searches this machine.
func hostPluginSearch() pluginSearch {
	home, _ := os.UserHomeDir()
	return pluginSearch{getenv: os.LookupEnv, home: home, roots: []string{"/usr/local", "/usr"}, gpu: hasNVIDIAGPU}
}

// dirs lists the folders searched, in order: $PJRT_PLUGIN_LIBRARY_PATH alone when set (as go-xla does); otherwise
// go-xla's defaults (~/.local/lib/go-xla and its nvidia/ folder, /usr/local/lib/go-xla, their gomlx/pjrt
// predecessors, the absolute entries of $LD_LIBRARY_PATH), then the jax_plugins folders of the Python environments
// ($VIRTUAL_ENV, ~/.local, /usr/local, /usr), where pip puts JAX's plugins. go-xla also reads /etc/ld.so.conf; this
// search does not, since nobody installs a PJRT plugin into a system library folder.
func (s pluginSearch) dirs() []string {
	if v, ok := s.getenv(PluginPathsEnv); ok {
		return nonEmpty(strings.Split(v, ":"))
	}
	var dirs, envs []string
	if s.home != "" {
		local := filepath.Join(s.home, ".local", "lib")
		dirs = append(dirs, filepath.Join(local, "go-xla"), filepath.Join(local, "go-xla", "nvidia"),
			filepath.Join(local, "gomlx", "pjrt"))
		envs = append(envs, filepath.Join(s.home, ".local"))
	}
	for _, r := range s.roots {
		if r == "/usr" {
			continue // go-xla's defaults name /usr/local only
		}
		dirs = append(dirs, filepath.Join(r, "lib", "go-xla"), filepath.Join(r, "lib", "go-xla", "nvidia"),
			filepath.Join(r, "lib", "gomlx", "pjrt"))
	}
	if v, _ := s.getenv("LD_LIBRARY_PATH"); v != "" {
		for _, d := range strings.Split(v, ":") {
			if filepath.IsAbs(d) {
				dirs = append(dirs, d)
			}
		}
	}
	if v, _ := s.getenv("VIRTUAL_ENV"); v != "" {
		envs = append([]string{v}, envs...)
	}
	envs = append(envs, s.roots...)
	for _, e := range envs {
		for _, pattern := range []string{"lib/python3*/site-packages/jax_plugins/*", "lib/python3*/dist-packages/jax_plugins/*",
			"lib/python3/dist-packages/jax_plugins/*"} {
			matches, _ := filepath.Glob(filepath.Join(e, pattern))
			for _, m := range matches {
				if jaxPluginDir.MatchString(filepath.Base(m)) {
					dirs = append(dirs, m)
				}
			}
		}
	}
	return dirs
}

// find lists the plugins in dirs, one per name (the first folder wins, as in go-xla), in search order.
func (s pluginSearch) find() []Plugin {
	var found []Plugin
	seen := map[string]bool{}
	for _, dir := range s.dirs() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := pluginName(dir, e.Name())
			if name == "" || seen[name] || e.IsDir() {
				continue
			}
			path, err := filepath.Abs(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			seen[name] = true
			found = append(found, Plugin{Name: name, Path: path})
		}
	}
	return found
}

// pluginName returns the plugin name of file in dir, "" when it is not a plugin.
func pluginName(dir, file string) string {
	for _, re := range pluginNames {
		if m := re.FindStringSubmatch(file); m != nil {
			return m[1]
		}
	}
	if m := jaxPluginDir.FindStringSubmatch(filepath.Base(dir)); m != nil && file == "xla_"+strings.TrimRight(m[1], "0123456789")+"_plugin.so" {
		return m[1]
	}
	return ""
}

// best returns the plugin auto-selection takes from found: a CUDA plugin when a GPU is present, else the CPU
// plugin, else none (an unknown plugin is never taken unasked). skipped says why CUDA plugins were passed over.
func (s pluginSearch) best(found []Plugin) (p Plugin, ok bool, skipped string) {
	var cuda []Plugin
	for _, f := range found {
		if f.CUDA() {
			cuda = append(cuda, f)
		}
	}
	if len(cuda) > 0 {
		if s.gpu() {
			return cuda[0], true, ""
		}
		skipped = "CUDA plugin " + cuda[0].Path + " passed over: no NVIDIA GPU (no /dev/nvidia*, no working nvidia-smi)"
	}
	if i := slices.IndexFunc(found, func(f Plugin) bool { return f.Name == "cpu" }); i >= 0 {
		return found[i], true, skipped
	}
	return Plugin{}, false, skipped
}

// hasNVIDIAGPU reports whether this machine has an NVIDIA GPU, by go-xla's test: /dev/nvidia* exists, or nvidia-smi
// runs and says NVIDIA-SMI.
func hasNVIDIAGPU() bool {
	if m, _ := filepath.Glob("/dev/nvidia*"); len(m) > 0 {
		return true
	}
	out, err := exec.Command("nvidia-smi").CombinedOutput()
	return err == nil && strings.Contains(string(out), "NVIDIA-SMI")
}

// cudaDataDir returns the folder for XLA_FLAGS=--xla_gpu_cuda_data_dir of a CUDA plugin: an nvidia/ folder beside the
// plugin's folder, the one go-xla v0.4.1 finds (pjrt/cuda_linux.go, cudaNVidiaPath); "" when there is none.
func cudaDataDir(plugin string) string {
	dir := filepath.Join(filepath.Dir(filepath.Dir(plugin)), "nvidia")
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir
	}
	return ""
}

func nonEmpty(ss []string) []string {
	return slices.DeleteFunc(ss, func(s string) bool { return s == "" })
}
