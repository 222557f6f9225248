// Package gradfix adds the reverse-mode gradient rules that gomlx v0.28.2 still lacks. Importing the package
// (directly, or through workbench/run) installs them; they are ordinary graph code and therefore also correct on XLA.
//
// The rules:
//
//   - Rsqrt: d x^{-1/2}/dx = -½ x^{-3/2} = -½ y³ with y = rsqrt(x).
//   - Expm1: d (eˣ-1)/dx = eˣ.
//
// gomlx v0.26.0 also needed replacements for the DotGeneral, Dot and Slice rules (a broadcast product where a second
// DotGeneral belongs, and a Pad the pure-Go backend lacked). v0.28.2's DotGeneral rule is two DotGenerals, Dot is
// gone, and the pure-Go backend has Pad, so those rules are upstream's again; the package's tests check upstream's
// DotGeneral and Slice gradients against finite differences, and fail once upstream defines Rsqrt's or Expm1's rule
// (then this package can go).
package gradfix

import (
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph"
)

// Fixed holds the rules this package installs, keyed by node type. Upstream defines none of them.
var Fixed = map[NodeType]VJP{
	NodeTypeRsqrt: single(rsqrtVJP),
	NodeTypeExpm1: single(expm1VJP),
}

// Missing lists the node types of Fixed that upstream had no rule for when the package was loaded (every one, for
// v0.28.2). A test checks that it still holds all of Fixed: a rule upstream adds should replace ours.
var Missing []NodeType

func init() {
	for t, rule := range Fixed {
		if VJPRegistration[t] == nil {
			Missing = append(Missing, t)
		}
		VJPRegistration[t] = rule
	}
}

func single(fn func(node, v *Node) []*Node) VJP {
	return func(node *Node, vjps []*Node, _ shapes.Shape) []*Node { return fn(node, vjps[0]) }
}

func rsqrtVJP(node, v *Node) []*Node {
	// node = x^{-1/2}; dnode/dx = -½ node³.
	return []*Node{Mul(v, MulScalar(Mul(node, Square(node)), -0.5))}
}

func expm1VJP(node, v *Node) []*Node {
	return []*Node{Mul(v, Exp(node.Inputs()[0]))}
}
