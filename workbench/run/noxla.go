//go:build noxla || !cgo || !((linux && amd64) || darwin)

package run

// xlaPlugins reports no XLA plugins: this build does not include the XLA backend (tag noxla, or no cgo).
func xlaPlugins() []string { return nil }
