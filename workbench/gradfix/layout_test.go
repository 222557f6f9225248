package gradfix

import (
	"slices"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
)

// backend is the pure-Go backend these tests build graphs on (they never run them). workbench/wbtest, which the
// other tests use, imports this package.
func backend(t *testing.T) compute.Backend {
	b, err := gobackend.New("")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDotGeneralRule_OperandsInBackendLayouts builds the gradients of the products a decoder's training step has
// and checks what the rule promises the pure-Go backend: every gradient DotGeneral takes its operands in a layout
// the backend multiplies without copying them (lhs [batch, free, contracting]; rhs [batch, contracting, free] or
// [batch, free, contracting]), no Transpose is by the identity, and the number of elements the graph transposes is
// the smaller of the two operand orders' (here: the fewest a single transposed operand allows).
func TestDotGeneralRule_OperandsInBackendLayouts(t *testing.T) {
	for _, c := range []struct {
		name                  string
		lhsDims, rhsDims      []int
		lhsContract, lhsBatch []int
		rhsContract, rhsBatch []int
		wantTransposed        int // elements the gradient graph transposes
	}{
		// Projection x[b,t,d]·W[d,f]: dx needs none; dW contracts (b,t), so one operand is transposed: x (the smaller).
		{"projection btd,df", []int{2, 5, 3}, []int{3, 7}, []int{2}, nil, []int{0}, nil, 2 * 5 * 3},
		// LM head h[b,t,d]·E[v,d] (E transposed, contracting its last axis): dE = vᵀh is [v,d]; transposing h
		// (b·t·d) and the [d,v] result beats transposing the [b,t,v] cotangent.
		{"lm head btd,vd", []int{2, 5, 3}, []int{11, 3}, []int{2}, nil, []int{1}, nil, 2*5*3 + 11*3},
		// Attention scores q[b,h,t,d]·k[b,h,s,d] → v[b,h,t,s]: dq = v·k needs no copy; dk contracts t, so v (b·h·t·s)
		// is transposed, which beats transposing q and the [b,h,d,s] result (b·h·t·d + b·h·s·d).
		{"scores bhtd,bhsd", []int{2, 3, 5, 4}, []int{2, 3, 6, 4}, []int{3}, []int{0, 1}, []int{3}, []int{0, 1},
			2 * 3 * 5 * 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := NewGraph(backend(t), "layout")
			l := Parameter(g, "l", shapes.Make(dtypes.Float64, c.lhsDims...))
			r := Parameter(g, "r", shapes.Make(dtypes.Float64, c.rhsDims...))
			y := DotGeneral(l, c.lhsContract, c.lhsBatch, r, c.rhsContract, c.rhsBatch)
			first := len(g.Nodes())
			Gradient(ReduceAllSum(Mul(y, y)), l, r)
			transposed := 0
			for _, n := range g.Nodes()[first:] {
				switch n.Type() {
				case NodeTypeDotGeneral:
					lhs, rhs := n.Inputs()[0], n.Inputs()[1]
					lc, lb := intsField(n, "lhsContractingAxes"), intsField(n, "lhsBatchAxes")
					rc, rb := intsField(n, "rhsContractingAxes"), intsField(n, "rhsBatchAxes")
					if packCost(lhs, lc, lb, rhs, rc, rb) != 0 {
						t.Errorf("gradient product %s has operands the backend would transpose", n)
					}
				case NodeTypeTranspose:
					perm := intsField(n, "permutation")
					if isIdentity(perm) {
						t.Errorf("identity transpose %s", n)
					}
					transposed += n.Shape().Size()
				}
			}
			if transposed != c.wantTransposed {
				t.Errorf("the gradient graph transposes %d elements, want %d", transposed, c.wantTransposed)
			}
		})
	}
}

func TestPackCost_CountsWhatTheBackendWouldCopy(t *testing.T) {
	g := NewGraph(backend(t), "pack")
	x := Parameter(g, "x", shapes.Make(dtypes.Float32, 4, 6, 8)) // 192 elements
	w := Parameter(g, "w", shapes.Make(dtypes.Float32, 8, 5))    // 40 elements
	for _, c := range []struct {
		name           string
		lhs            *Node
		lc, lb         []int
		rhs            *Node
		rc, rb         []int
		want           int
		wantTransposed bool
	}{
		{"matmul [n,k]·[k,m]", x, []int{2}, nil, w, []int{0}, nil, 0, false},
		{"rhs contracting last [n,k]·[m,k]", w, []int{0}, nil, x, []int{2}, nil, 40, true},
		{"lhs contracting first", x, []int{0}, nil, x, []int{0}, nil, 192, true},
	} {
		got := packCost(c.lhs, c.lc, c.lb, c.rhs, c.rc, c.rb)
		if got != c.want {
			t.Errorf("%s: packCost=%d, want %d", c.name, got, c.want)
		}
		before := len(g.Nodes())
		packedDot(c.lhs, c.lc, c.lb, c.rhs, c.rc, c.rb)
		isTranspose := func(n *Node) bool { return n.Type() == NodeTypeTranspose }
		sawTranspose := slices.ContainsFunc(g.Nodes()[before:], isTranspose)
		if sawTranspose != c.wantTransposed {
			t.Errorf("%s: packedDot transposed=%v, want %v", c.name, sawTranspose, c.wantTransposed)
		}
	}
}
