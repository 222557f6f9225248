//go:build !noxla && cgo && ((linux && amd64) || darwin)

package run

import (
	"os"

	"github.com/gomlx/compute"
	"github.com/gomlx/go-xla/compute/xla"
	"github.com/gomlx/go-xla/pjrt"
)

// xlaBuilt: this build includes the XLA backend.
const xlaBuilt = true

// newXLA starts the XLA backend with config (what follows "xla:": a plugin name or absolute path, then gomlx's
// ",tf32"-style flags) and the plugin client options. gomlx downloads a plugin given by name only when
// $GOMLX_NO_AUTO_INSTALL is unset; a path never downloads anything.
func newXLA(config string, options map[string]any) (compute.Backend, error) {
	_, noAuto := os.LookupEnv(noAutoInstallEnv)
	xla.EnableAutoInstall(!noAuto)
	return xla.NewWithOptions(config, pjrt.NamedValuesMap(options))
}
