package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Provenance records where a result came from. Experiments embed it in their Result and store it with the numbers.
type Provenance struct {
	Config    any       `json:"config"`              // the final configuration, after preset and overrides
	Overrides string    `json:"overrides,omitempty"` // the override string applied, verbatim
	GitCommit string    `json:"git_commit"`          // `git describe --always --dirty`, or "unknown"
	Backend   string    `json:"backend"`             // backend configuration, e.g. "go:parallelism=-1"
	GoVersion string    `json:"go_version"`          // runtime.Version()
	GomlxVer  string    `json:"gomlx_version"`       // from the build info, e.g. "v0.28.2"
	SIMD      string    `json:"simd,omitempty"`      // the go backend's matmul kernels: AVX-512, AVX2, none
	Seed      uint64    `json:"seed"`                // the run's seed
	Host      string    `json:"host"`                // os.Hostname
	NumCPU    int       `json:"num_cpu"`             // runtime.NumCPU
	CPUModel  string    `json:"cpu_model"`           // /proc/cpuinfo's "model name", else GOARCH (CPUModel)
	Start     time.Time `json:"start"`               // when NewProvenance was called
	End       time.Time `json:"end"`                 // set by Finish
	// WallSeconds is End − Start; CPUUserSeconds and CPUSystemSeconds the CPU time the whole process spent
	// between NewProvenance and Finish (getrusage RUSAGE_SELF, every thread; 0 where the system has no getrusage).
	// All three are set by Finish; results stored before they existed load with zeros.
	WallSeconds      float64            `json:"wall_s"`
	CPUUserSeconds   float64            `json:"cpu_user_s"`
	CPUSystemSeconds float64            `json:"cpu_system_s"`
	Timings          map[string]float64 `json:"timings_s,omitempty"` // seconds per named phase, from Time
	Extra            map[string]string  `json:"extra,omitempty"`     // free-form notes (e.g. corpus path)
	mu               sync.Mutex
	cpuStart         cpuTimes // the process's CPU times at NewProvenance
}

// NewProvenance starts a provenance record for a run with the given final config and seed.
func NewProvenance(cfg any, overrides string, seed uint64) *Provenance {
	host, _ := os.Hostname()
	return &Provenance{
		Config:    cfg,
		Overrides: overrides,
		GitCommit: GitDescribe(),
		Backend:   BackendConfig(),
		GoVersion: runtime.Version(),
		GomlxVer:  ModuleVersion("github.com/gomlx/gomlx"),
		Seed:      seed,
		Host:      host,
		NumCPU:    runtime.NumCPU(),
		CPUModel:  CPUModel(),
		Start:     time.Now(),
		Timings:   map[string]float64{},
		cpuStart:  processCPU(),
	}
}

// Time runs fn and adds its wall time, in seconds, to the named timing. It returns fn's error.
func (p *Provenance) Time(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	p.AddTiming(name, time.Since(start))
	return err
}

// AddTiming adds d to the named timing.
func (p *Provenance) AddTiming(name string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.Timings == nil {
		p.Timings = map[string]float64{}
	}
	p.Timings[name] += d.Seconds()
}

// Finish stamps the end time, the wall and CPU seconds since NewProvenance, and the backend actually used.
func (p *Provenance) Finish() {
	p.End = time.Now()
	p.WallSeconds = p.End.Sub(p.Start).Seconds()
	now := processCPU()
	p.CPUUserSeconds = now.user - p.cpuStart.user
	p.CPUSystemSeconds = now.system - p.cpuStart.system
	if name := BackendName(); name != "" {
		p.Backend = name
	}
	if strings.HasPrefix(p.Backend, "go") {
		p.SIMD = SIMD().Kernels
	}
}

var (
	cpuOnce  sync.Once
	cpuModel string
)

// CPUModel returns the machine's CPU model as /proc/cpuinfo names it ("model name"), or runtime.GOARCH where there
// is no such line (another system, or an ARM machine whose cpuinfo names no model).
func CPUModel() string {
	cpuOnce.Do(func() {
		cpuModel = runtime.GOARCH
		if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
			if m := cpuModelFrom(string(b)); m != "" {
				cpuModel = m
			}
		}
	})
	return cpuModel
}

// cpuModelFrom returns the value of the first "model name" line of a /proc/cpuinfo text, or "".
func cpuModelFrom(cpuinfo string) string {
	for _, line := range strings.Split(cpuinfo, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// ModuleVersion returns the version of a dependency as recorded in the binary's build info, else as required by the
// checkout's go.mod (test binaries carry no dependency list), else "unknown".
func ModuleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == path {
				if m.Replace != nil {
					return m.Replace.Version
				}
				return m.Version
			}
		}
	}
	if root, err := ModuleRoot(); err == nil {
		if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require ")); len(f) >= 2 && f[0] == path {
					return f[1]
				}
			}
		}
	}
	return "unknown"
}

var (
	gitOnce     sync.Once
	gitDescribe string
)

// GitDescribe returns `git describe --always --dirty` of the ProtoLab checkout (found from the working directory
// upwards), the VCS revision stamped in the binary when there is no checkout, or "unknown".
func GitDescribe() string {
	gitOnce.Do(func() {
		gitDescribe = "unknown"
		if root, err := ModuleRoot(); err == nil {
			cmd := exec.Command("git", "describe", "--always", "--dirty")
			cmd.Dir = root
			if out, err := cmd.Output(); err == nil {
				gitDescribe = strings.TrimSpace(string(out))
				return
			}
		}
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				if s.Key == "vcs.revision" {
					gitDescribe = s.Value
				}
			}
		}
	})
	return gitDescribe
}

// ModulePath is ProtoLab's Go module path.
const ModulePath = "github.com/protolab/protolab"

// ModuleRoot returns the ProtoLab checkout containing the working directory: $PROTOLAB_ROOT when set, otherwise the
// nearest parent folder whose go.mod declares ModulePath.
func ModuleRoot() (string, error) {
	if root := os.Getenv("PROTOLAB_ROOT"); root != "" {
		return root, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.Contains(string(b), "module "+ModulePath+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
