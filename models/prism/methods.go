package prism

// Attribution methods (docs/spec/prism.md §6–§7; the table in doc.go). Scores follow kronfluence's sign (positive =
// helpful: up-weighting the training sequence lowers the query loss) and are divided by the number of corpus tokens
// N_tok (spec §6.1).
const (
	// MethodPrism is the cached method of spec §6.2 and §12 as written, the default: option-B gradients (codes held
	// fixed, g_{s,j} = Σ_t a_{t,j} u_t, scored from the per-token cache and its postings) preconditioned by the
	// diagonal-C blocks (H_jj + λI)⁻¹ with the damping of §5.
	MethodPrism = "prism"
	// MethodPrismFullC is MethodPrism with the full co-usage curvature H of §5 instead of the diagonal-C blocks.
	MethodPrismFullC = "prism_full_c"
	// MethodPrismDot is the prototype-space gradient dot product Σ_j ⟨g_{q,j}, g_{s,j}⟩ of the option-B gradients
	// (§7.2): MethodPrism without a preconditioner.
	MethodPrismDot = "prism_dot"
	// MethodExactCE is the cross-entropy part of the §6.3 reference, cached: per-sequence gradient columns with the
	// routing term ∂a/∂P (option A; the query's too), preconditioned by the full co-usage curvature H. It is the
	// reference without the training sequences' REC and R2 gradients, so its agreement with the reference measures
	// only those terms, not the cost of caching.
	MethodExactCE = "exact_ce"
	// MethodExactCEDiagC is MethodExactCE with the diagonal-C blocks instead of the full H.
	MethodExactCEDiagC = "exact_ce_diag_c"
	// MethodReference is the full prototype-space reference of §6.3: gradients with ∂a/∂P, REC and R2, and the
	// full sparse co-usage C, in float64.
	MethodReference = "reference"
	// MethodEKFAC is EK-FAC (§7.1, kronfluence) over the backbone's linear layers: FFN gate, up, down and the
	// attention output projection of every block.
	MethodEKFAC = "ekfac"
	// MethodEKFACBank is EK-FAC with P as the only module (the linear map a → ẑ with output gradient u).
	MethodEKFACBank = "ekfac_bank"
	// MethodGradDot is the gradient dot product over the same linear layers as MethodEKFAC (§7.2).
	MethodGradDot = "graddot"
)

// Methods lists the methods Attributor.Query accepts, the default first.
var Methods = []string{MethodPrism, MethodPrismFullC, MethodPrismDot, MethodExactCE, MethodExactCEDiagC,
	MethodReference, MethodEKFAC, MethodEKFACBank, MethodGradDot}

// CachedMethods lists the methods scored from the caches and their preconditioners (Attributor.RunCached), default
// first.
var CachedMethods = []string{MethodPrism, MethodPrismFullC, MethodPrismDot, MethodExactCE, MethodExactCEDiagC}

// routedMethod reports whether a cached method uses the option-A columns with the routing term ∂a/∂P.
func routedMethod(method string) bool { return method == MethodExactCE || method == MethodExactCEDiagC }
