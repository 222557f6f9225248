package tokenizer_test

import (
	"fmt"
	"strings"

	"github.com/protolab/protolab/workbench/tokenizer"
)

func ExampleTrain() {
	corpus := strings.Repeat("the cat sat on the mat. the cat ate the rat. ", 50)
	cfg := tokenizer.DefaultConfig()
	cfg.VocabSize = 256 + 12 + len(cfg.SpecialTokens)
	tok, err := tokenizer.Train([]string{corpus}, cfg)
	if err != nil {
		fmt.Printf("%+v\n", err)
		return
	}
	ids := tok.Encode("the cat sat on the rat.")
	eos, _ := tok.SpecialID("<|eos|>")
	ids = append(ids, eos)
	var pieces []string
	for _, id := range ids {
		pieces = append(pieces, fmt.Sprintf("%q", tok.Piece(id)))
	}
	fmt.Println("vocab size:", tok.VocabSize())
	fmt.Println("tokens:", len(ids))
	fmt.Println(strings.Join(pieces, " "))
	fmt.Printf("%q\n", tok.DecodeString(ids))

	cfg.VocabSize = 10_000
	_, err = tokenizer.Train([]string{corpus}, cfg)
	fmt.Println(err != nil && strings.Contains(err.Error(), "larger than the data supports"))
	// Output:
	// vocab size: 271
	// tokens: 11
	// "the" " cat" " s" "at" " o" "n" " the" " r" "at" "." "<|eos|>"
	// "the cat sat on the rat.<|eos|>"
	// true
}
