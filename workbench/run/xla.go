//go:build !noxla && cgo && ((linux && amd64) || darwin)

package run

import (
	"os"

	"github.com/gomlx/gomlx/backends/xla"
)

// xlaPlugins lists the PJRT plugins installed on this machine. It never downloads one: gomlx's auto-install is
// switched off during the search and switched back on afterwards (unless $GOMLX_NO_AUTO_INSTALL is set), so a user who
// asks for XLA explicitly through $GOMLX_BACKEND still gets gomlx's installer.
func xlaPlugins() (plugins []string) {
	xla.EnableAutoInstall(false)
	defer func() {
		_, noAuto := os.LookupEnv(xla.NoAutoInstallEnv)
		xla.EnableAutoInstall(!noAuto)
		if r := recover(); r != nil { // a broken plugin folder must not stop the pure-Go fallback
			plugins = nil
		}
	}()
	return xla.GetAvailablePlugins()
}
