package plot

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/pkg/errors"
)

const (
	// AssetsEnv names the environment variable that points at the assets folder (the one holding
	// echarts/echarts.min.js); it overrides the search from the working directory.
	AssetsEnv = "PROTOLAB_ASSETS"

	// modulePath is the module whose root holds assets/.
	modulePath = "github.com/protolab/protolab"

	// echartsRel is the echarts bundle's path inside the assets folder.
	echartsRel = "echarts/echarts.min.js"
)

// EchartsPath returns the path of echarts.min.js: $PROTOLAB_ASSETS/echarts/echarts.min.js when the variable
// is set, else assets/echarts/echarts.min.js under the protolab module root found by walking up from the
// working directory, or failing that from this package's source directory (which is where a GoNB notebook's
// `go mod edit -replace` points). It returns an error naming `make setup` when the file is missing.
func EchartsPath() (string, error) {
	if dir := os.Getenv(AssetsEnv); dir != "" {
		p := filepath.Join(dir, filepath.FromSlash(echartsRel))
		if !isFile(p) {
			return "", errors.Errorf("plot: echarts library not found at %s ($%s=%s); run `make setup` in the "+
				"protolab repository, or point $%s at the folder holding %s", p, AssetsEnv, dir, AssetsEnv, echartsRel)
		}
		return p, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	var roots []string
	for _, start := range starts {
		root, ok := moduleRoot(start)
		if !ok {
			continue
		}
		p := filepath.Join(root, "assets", filepath.FromSlash(echartsRel))
		if isFile(p) {
			return p, nil
		}
		roots = append(roots, root)
	}
	if len(roots) > 0 {
		return "", errors.Errorf("plot: echarts library missing: %s; run `make setup` (or `make setup-echarts`) in %s",
			filepath.Join(roots[0], "assets", filepath.FromSlash(echartsRel)), roots[0])
	}
	return "", errors.Errorf("plot: echarts library not found: no %s module root above %q; run `make setup` in the "+
		"protolab repository and set $%s to its assets folder", modulePath, strings.Join(starts, `" or "`), AssetsEnv)
}

// moduleRoot walks up from dir to the folder whose go.mod declares modulePath.
func moduleRoot(dir string) (string, bool) {
	for {
		if modulePathOf(filepath.Join(dir, "go.mod")) == modulePath {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// modulePathOf returns the module path declared by the go.mod file at path, or "".
func modulePathOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			if f := strings.Fields(rest); len(f) > 0 {
				return strings.Trim(f[0], `"`)
			}
			return ""
		}
	}
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

var (
	echartsMu        sync.Mutex
	echartsCachePath string
	echartsCache     []byte
)

// EchartsJS returns the echarts library (see EchartsPath), read once per process and path.
func EchartsJS() ([]byte, error) {
	p, err := EchartsPath()
	if err != nil {
		return nil, err
	}
	echartsMu.Lock()
	defer echartsMu.Unlock()
	if echartsCache != nil && echartsCachePath == p {
		return echartsCache, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, errors.Wrapf(err, "plot: reading echarts library %s", p)
	}
	if len(b) == 0 {
		return nil, errors.Errorf("plot: echarts library %s is empty; run `make setup-echarts` again", p)
	}
	echartsCachePath, echartsCache = p, b
	return b, nil
}

// libraryScript returns a <script> element that defines window.echarts from js unless it is already
// defined. define, exports and module are shadowed so that the UMD header takes its global branch even
// when RequireJS (Jupyter's HTML export) or CommonJS globals are present.
func libraryScript(js []byte) string {
	var b strings.Builder
	b.Grow(len(js) + 256)
	b.WriteString(`<script type="text/javascript">if (typeof window.echarts === "undefined") {` +
		"(function(){var define=undefined,exports=undefined,module=undefined;\n")
	b.Write(js)
	b.WriteString("\n}).call(window);}</script>")
	return b.String()
}
