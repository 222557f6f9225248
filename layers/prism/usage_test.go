package prism

import (
	"math"
	"slices"
	"testing"

	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"

	"github.com/protolab/protolab/workbench/wbtest"
)

func usageBatch(indices []int32, acts []float64, T, k int) (*tensors.Tensor, *tensors.Tensor) {
	return tensors.FromFlatDataAndDimensions(indices, 1, T, k), wbtest.Tensor64(acts, 1, T, k)
}

// TestUsage_HandExample: K = 5, k = 2. Step 0 has tokens {1: 0.5, 3: 0.2}, {3: 0.4, 0: 0}, {1: 0.1, 3: 0.3} and a
// pad {4: 0.9, 2: 0.9}; step 1 has {3: 0.7, 2: 0}. Prototype 0 is selected once with activation 0, so it is not
// used: counts (0, 2, 0, 4, 0), dead fraction 3/5, C_11 = 0.26, C_33 = 0.78, C_13 = 0.13, entropy of (1/3, 2/3),
// mean active (2+1+2+1)/4.
func TestUsage_HandExample(t *testing.T) {
	u := NewUsage(5)
	idx, act := usageBatch([]int32{1, 3, 3, 0, 1, 3, 4, 2}, []float64{0.5, 0.2, 0.4, 0, 0.1, 0.3, 0.9, 0.9}, 4, 2)
	if err := u.Add(idx, act, tensors.FromFlatDataAndDimensions([]bool{true, true, true, false}, 1, 4)); err != nil {
		t.Fatal(err)
	}
	idx, act = usageBatch([]int32{3, 2}, []float64{0.7, 0}, 1, 2)
	if err := u.Add(idx, act, nil); err != nil {
		t.Fatal(err)
	}
	if got := u.Counts(); !slices.Equal(got, []int64{0, 2, 0, 4, 0}) {
		t.Fatalf("counts %v, want [0 2 0 4 0]", got)
	}
	wbtest.RequireClose(t, "mass", []float64{0, 0.6, 0, 1.6, 0}, u.Mass(), 1e-12)
	wbtest.RequireClose(t, "sq mass", []float64{0, 0.26, 0, 0.78, 0}, u.SqMass(), 1e-12)
	C := u.CoUsageDense()
	for i := range 5 {
		for j := range 5 {
			want := 0.0
			switch {
			case i == 1 && j == 1:
				want = 0.26
			case i == 3 && j == 3:
				want = 0.78
			case i == 1 && j == 3, i == 3 && j == 1:
				want = 0.13
			}
			if !wbtest.Close(want, C[i][j], 1e-12) || !wbtest.Close(want, u.CoUsage(i, j), 1e-12) {
				t.Fatalf("C[%d][%d] = %g (CoUsage %g), want %g", i, j, C[i][j], u.CoUsage(i, j), want)
			}
		}
	}
	s := u.Summary()
	q1, q3 := 1.0/3, 2.0/3
	wbtest.RequireClose(t, "summary [dead entropy active offdiag tokens steps]",
		[]float64{0.6, -(q1*math.Log(q1) + q3*math.Log(q3)), 6.0 / 4, 0.26 / (0.26 + 1.04), 4, 2},
		[]float64{s.DeadFraction, s.Entropy, s.MeanActive, s.OffDiagonalMass, float64(s.Tokens), float64(s.Steps)}, 1e-12)
	for _, c := range []struct {
		window int
		want   []int
	}{{1, []int{0, 1, 2, 4}}, {2, []int{0, 2, 4}}, {3, nil}} {
		if got := u.Dead(c.window); !slices.Equal(got, c.want) {
			t.Fatalf("Dead(%d) = %v, want %v", c.window, got, c.want)
		}
	}
}

func TestUsage_RejectsBadBatches(t *testing.T) {
	u := NewUsage(4)
	for name, c := range map[string]struct {
		idx  []int32
		acts []float64
	}{
		"out of range": {[]int32{0, 4}, []float64{1, 1}},
		"negative":     {[]int32{-1, 2}, []float64{1, 1}},
		"repeated":     {[]int32{2, 2}, []float64{1, 1}},
	} {
		idx, act := usageBatch(c.idx, c.acts, 1, 2)
		if err := u.Add(idx, act, nil); err == nil {
			t.Fatalf("%s: want an error", name)
		}
	}
	idx, _ := usageBatch([]int32{0, 1}, []float64{1, 1}, 1, 2)
	if err := u.Add(idx, wbtest.Tensor64([]float64{1, 1}, 2, 1), nil); err == nil {
		t.Fatal("mismatched shapes: want an error")
	}
	if u.Steps() != 0 || u.Tokens() != 0 || u.DeadFraction() != 1 {
		t.Fatalf("failed Adds changed the state: steps %d tokens %d dead %g", u.Steps(), u.Tokens(), u.DeadFraction())
	}
}

// TestUsage_MatchesCodes feeds a Decompose result to Usage and checks the co-usage matrix against C = Σ_t a_t a_tᵀ
// computed from Codes, and the counts against the positive codes.
func TestUsage_MatchesCodes(t *testing.T) {
	c := newCase(20)
	cfg := testConfig()
	outs := MustExecOnceN(wbtest.Backend(t), func(nodes []*Node) []*Node {
		d := Decompose(nodes[inH], nodes[inBank], nodes[inW], cfg)
		return []*Node{d.Indices, d.Activations, d.Codes}
	}, c.inputs(nil)...)
	u := NewUsage(tK)
	if err := u.Add(outs[0], outs[1], nil); err != nil {
		t.Fatal(err)
	}
	codes := wbtest.Flat64(outs[2])
	counts := make([]int64, tK)
	for tok := range tB * tT {
		a := codes[tok*tK : (tok+1)*tK]
		for i := range tK {
			if a[i] > 0 {
				counts[i]++
			}
		}
	}
	if !slices.Equal(counts, u.Counts()) {
		t.Fatalf("counts %v, from codes %v", u.Counts(), counts)
	}
	C := u.CoUsageDense()
	for i := range tK {
		for j := range tK {
			want := 0.0
			for tok := range tB * tT {
				want += codes[tok*tK+i] * codes[tok*tK+j]
			}
			if !wbtest.Close(want, C[i][j], 1e-12) {
				t.Fatalf("C[%d][%d] = %g, from codes %g", i, j, C[i][j], want)
			}
		}
	}
}
