package docs_test

import (
	"fmt"

	"github.com/protolab/protolab/docs"
)

func ExamplePaper() {
	p, err := docs.Paper("protot_ppl_protot")
	if err != nil {
		fmt.Printf("%+v\n", err)
		return
	}
	fmt.Printf("%s: %s = %g (%s; %s)\n", p.ID, p.Quantity, p.Value, p.Setting, p.Source)
	// Output:
	// protot_ppl_protot: perplexity = 90.5 (L6 D256 T256, FineWeb-Edu (18k docs); protot.md §8 (protocol §7.1))
}
