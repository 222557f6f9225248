package interp

// SAEStats describes the sparse autoencoder of one layer, measured on the evaluation tokens.
type SAEStats struct {
	Layer    int     `json:"layer"`
	Features int     `json:"features"` // dictionary size F
	L0       float64 `json:"l0"`       // mean number of active features per token
	FVU      float64 `json:"fvu"`      // fraction of variance unexplained by the reconstruction
	Lambda   float64 `json:"lambda"`   // the L1 weight reached (adapted towards sae.model.target_l0)
	Dead     int     `json:"dead"`     // features that never fire on the evaluation tokens
	Seconds  float64 `json:"seconds"`  // training wall time
}
