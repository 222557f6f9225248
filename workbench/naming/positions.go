package naming

// ClassOther is the class of the positions whose target token carries no concept value.
const ClassOther = "other"

// Occurrence is one occurrence of a word among the positions of a Text: the inputs Pos … Pos+Len−1 predict its
// Len tokens.
type Occurrence struct {
	Pos int `json:"pos"`
	Len int `json:"len"`
}

// WordOccurrences returns, per label id of es, the positions whose target starts a word carrying the label (and
// ending within the sequence), with the word's length in tokens.
func (es *Text) WordOccurrences() [][]Occurrence {
	out := make([][]Occurrence, len(es.Tokens.Names))
	for n, k := range es.NextWord {
		if k == 0 {
			continue
		}
		for _, l := range es.Next[n] {
			out[l] = append(out[l], Occurrence{Pos: n, Len: k})
		}
	}
	return out
}

// Classes partitions the first n positions of es by the concept (ConceptOf) of their target token's labels: one
// class per concept among the label names, in order of first appearance, a token with values of several concepts
// in each of their classes, and ClassOther last for targets carrying none (NoneLabel included). It returns the
// classes, each one's share of the n positions and its positions.
func (es *Text) Classes(n int) (classes []string, share []float64, pos [][]int) {
	index := map[string]int{}
	for _, name := range es.Tokens.Names {
		if name == NoneLabel {
			continue
		}
		c := ConceptOf(name)
		if _, seen := index[c]; !seen {
			index[c] = len(classes)
			classes = append(classes, c)
		}
	}
	classes = append(classes, ClassOther)
	pos = make([][]int, len(classes))
	for i := range n {
		in := make([]bool, len(classes))
		labelled := false
		for _, l := range es.Next[i] {
			if name := es.Tokens.Names[l]; name != NoneLabel {
				in[index[ConceptOf(name)]], labelled = true, true
			}
		}
		in[len(classes)-1] = !labelled
		for c, ok := range in {
			if ok {
				pos[c] = append(pos[c], i)
			}
		}
	}
	for _, p := range pos {
		share = append(share, float64(len(p))/float64(max(1, n)))
	}
	return classes, share, pos
}
