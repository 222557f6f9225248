package pair

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHalfLife(t *testing.T) {
	require.InDelta(t, 1, HalfLife(0.5), 1e-15)
	require.InDelta(t, math.Log(0.5)/math.Log(0.9), HalfLife(0.9), 1e-15)
	require.True(t, math.IsInf(HalfLife(1), 1))
}
