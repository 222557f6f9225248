package attribution

// Attribution methods (docs/spec/prism.md §6–§7; the table in doc.go). Scores follow kronfluence's sign (positive =
// helpful: up-weighting the training sequence lowers the query loss) and are divided by the number of corpus tokens
// N_tok (spec §6.1).
const (
	// MethodPrism is the cached method (spec §6.2): per-sequence gradient columns with the routing term ∂a/∂P (the
	// query's too), preconditioned by the full co-usage curvature H.
	MethodPrism = "prism"
	// MethodPrismDiagC is MethodPrism with the diagonal-C blocks (H_jj + λI)⁻¹ instead of the full H.
	MethodPrismDiagC = "prism_diag_c"
	// MethodPrismFullC is MethodPrism with the option-B gradients (codes held fixed: g_{s,j} = Σ_t a_{t,j} u_t, no
	// ∂a/∂P) on both sides.
	MethodPrismFullC = "prism_full_c"
	// MethodPrismCodes is spec §6.2 as written: option-B gradients (codes fixed) and the diagonal-C blocks.
	MethodPrismCodes = "prism_codes"
	// MethodPrismDot is the prototype-space gradient dot product Σ_j ⟨g_{q,j}, g_{s,j}⟩ of the option-B gradients
	// (§7.2).
	MethodPrismDot = "prism_dot"
	// MethodReference is the full prototype-space reference of §6.3: gradients with ∂a/∂P, REC and R2, and the
	// full sparse co-usage C, in float64.
	MethodReference = "reference"
	// MethodReferenceCE is an ablation: the reference with the training sequences' REC and R2 gradients left out
	// (cross-entropy with ∂a/∂P only).
	MethodReferenceCE = "reference_ce"
	// MethodEKFAC is EK-FAC (§7.1, kronfluence) over the backbone's linear layers: FFN gate, up, down and the
	// attention output projection of every block.
	MethodEKFAC = "ekfac"
	// MethodEKFACBank is EK-FAC with P as the only module (the linear map a → ẑ with output gradient u).
	MethodEKFACBank = "ekfac_bank"
	// MethodGradDot is the gradient dot product over the same linear layers as MethodEKFAC (§7.2).
	MethodGradDot = "graddot"
)

// Methods lists the methods Attributor.Query accepts.
var Methods = []string{MethodPrism, MethodPrismDiagC, MethodPrismFullC, MethodPrismCodes, MethodPrismDot,
	MethodReference, MethodReferenceCE, MethodEKFAC, MethodEKFACBank, MethodGradDot}

// cachedMethods lists the methods Attributor.cachedQuery serves, default first.
var cachedMethods = []string{MethodPrism, MethodPrismDiagC, MethodPrismFullC, MethodPrismCodes, MethodPrismDot}
