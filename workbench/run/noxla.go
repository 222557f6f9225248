//go:build noxla || !cgo || !((linux && amd64) || darwin)

package run

import (
	"github.com/gomlx/compute"
	"github.com/pkg/errors"
)

// xlaBuilt: this build does not include the XLA backend (tag noxla, or no cgo).
const xlaBuilt = false

// newXLA fails: selector.choose never picks XLA in this build, so reaching it is a bug.
func newXLA(string, map[string]any) (compute.Backend, error) {
	return nil, errors.New("this binary was built without the XLA backend (tag noxla or CGO_ENABLED=0)")
}
