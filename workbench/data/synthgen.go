package data

import "slices"

// docGen generates one synthetic document and its labels.
type docGen struct {
	cfg *SyntheticConfig
	lex map[string]lexMarks
	r   *rng

	text []byte
	lab  DocLabels

	// Document latents.
	gender, country, topic, role, name int

	// Sentence state.
	sentFirstWord int   // index of the sentence's first word
	sentStartByte int32 // byte offset of the sentence's first word
	sentNumber    int16 // subject number, in force over the sentence
	capNext       bool  // capitalise the next word
	mainAgreement int   // index in lab.Agreements of the sentence's main dependency, or -1
}

func (g *docGen) document() (string, DocLabels) {
	g.gender = g.r.intn(2)
	g.country = g.r.intn(len(countries))
	g.topic = g.r.intn(len(topics))
	g.role = g.r.intn(len(roles))
	g.name = g.r.intn(len(names[g.gender]))
	nSent := g.cfg.MinSentences + g.r.intn(g.cfg.MaxSentences-g.cfg.MinSentences+1)
	// Preallocate for a typical sentence (most of the generator's time is otherwise spent growing slices).
	meanDistance := 0
	for _, d := range g.cfg.Distances {
		meanDistance += d
	}
	words := nSent * (10 + meanDistance/len(g.cfg.Distances))
	g.text = make([]byte, 0, words*7)
	g.lab.Starts, g.lab.Ends = make([]int32, 0, words), make([]int32, 0, words)
	g.lab.InForce = make([][]int16, numSynthConcepts)
	g.lab.Marked = make([][]int16, numSynthConcepts)
	for c := range numSynthConcepts {
		g.lab.InForce[c], g.lab.Marked[c] = make([]int16, 0, words), make([]int16, 0, words)
	}
	g.lab.Sentences = make([]SentenceLabel, 0, nSent)

	g.introduction()
	for range nSent - 1 {
		k := pick(g.r, g.cfg.Distances)
		switch u := g.r.float64(); {
		case u < 0.45:
			g.numberSentence(k)
		case u < 0.8:
			g.genderSentence(k)
		default:
			g.travelSentence()
		}
	}
	return string(g.text), g.lab
}

// word appends one word; its Marked labels come from the lexicon and its InForce labels from the latents.
func (g *docGen) word(w string) int32 {
	if g.capNext {
		w = capitalize(w)
		g.capNext = false
	}
	if len(g.text) > 0 && w != "." {
		g.text = append(g.text, ' ')
	}
	start := int32(len(g.text))
	g.text = append(g.text, w...)
	g.lab.Starts = append(g.lab.Starts, start)
	g.lab.Ends = append(g.lab.Ends, int32(len(g.text)))
	m, ok := g.lex[w]
	if !ok {
		m = noMarks
	}
	inForce := lexMarks{int16(g.gender), int16(g.country), int16(g.topic), g.sentNumber, -1}
	for c := range numSynthConcepts {
		g.lab.InForce[c] = append(g.lab.InForce[c], inForce[c])
		g.lab.Marked[c] = append(g.lab.Marked[c], m[c])
	}
	return int32(len(g.lab.Starts) - 1)
}

func (g *docGen) words(ws ...string) {
	for _, w := range ws {
		g.word(w)
	}
}

func (g *docGen) beginSentence(number int) {
	g.sentFirstWord = len(g.lab.Starts)
	g.sentNumber = int16(number)
	g.capNext = true
	g.mainAgreement = -1
	g.sentStartByte = int32(len(g.text))
	if len(g.text) > 0 {
		g.sentStartByte++ // the separating space
	}
}

// agree records that target's form is fixed by controller; main marks the sentence's main dependency.
func (g *docGen) agree(concept int, value int, controller, target int32, alternative string, main bool) {
	d := int(target - controller)
	g.lab.Agreements = append(g.lab.Agreements, Agreement{Concept: concept, Value: int16(value),
		Controller: controller, Target: target, Distance: d, Alternative: alternative})
	if di := slices.Index(g.cfg.Distances, d); di >= 0 {
		g.lab.Marked[ConceptAgreement][target] = int16(di)
	}
	if main {
		g.mainAgreement = len(g.lab.Agreements) - 1
	}
}

func (g *docGen) endSentence() {
	g.word(".")
	end := len(g.lab.Starts)
	values := make([]int16, numSynthConcepts)
	for c := range numSynthConcepts {
		values[c] = -1
	}
	for _, c := range []int{ConceptGender, ConceptCountry, ConceptTopic} {
		for w := g.sentFirstWord; w < end; w++ {
			if v := g.lab.Marked[c][w]; v >= 0 {
				values[c] = v
				break
			}
		}
	}
	values[ConceptNumber] = g.sentNumber
	if g.mainAgreement >= 0 {
		a := g.lab.Agreements[g.mainAgreement]
		if di := slices.Index(g.cfg.Distances, a.Distance); di >= 0 {
			values[ConceptAgreement] = int16(di)
			for w := a.Controller; w <= a.Target; w++ {
				g.lab.InForce[ConceptAgreement][w] = int16(di)
			}
		}
	}
	g.lab.Sentences = append(g.lab.Sentences, SentenceLabel{
		Start: g.sentStartByte, End: int32(len(g.text)), Values: values})
}

// referent mentions the document's referent as a sentence subject (name, "the <role>" or pronoun); returns the
// head word.
func (g *docGen) referent() int32 {
	switch g.r.intn(3) {
	case 0:
		return g.word(names[g.gender][g.name])
	case 1:
		g.word("the")
		return g.word(roles[g.role][g.gender])
	default:
		return g.word(pronounSubj[g.gender])
	}
}

// verb appends a topic verb agreeing with number and records the dependency on controller.
func (g *docGen) verb(number int, controller int32, main bool) {
	v := pick(g.r, topics[g.topic].verbs)
	t := g.word(v[number])
	g.agree(ConceptNumber, number, controller, t, v[1-number], main)
}

// thing appends a topic noun phrase of exactly n words (1 or 2).
func (g *docGen) thing(n int) {
	t := pick(g.r, topics[g.topic].things)
	if n == 1 { // a bare noun: mass or plural (a bare singular count noun is not English)
		if t.pl == "" {
			g.word(t.sg)
		} else {
			g.word(t.pl)
		}
		return
	}
	form := t.sg
	if t.pl != "" && g.r.intn(2) == 1 {
		form = t.pl
	}
	det := "the"
	if form == t.sg && t.pl != "" && g.r.intn(2) == 0 {
		det = article(form)
	}
	g.words(det, form)
}

// placePhrase appends "at the <topic place>" or "in <city>".
func (g *docGen) placePhrase() {
	if g.r.intn(2) == 0 {
		g.words("at", "the", pick(g.r, topics[g.topic].places))
	} else {
		g.words("in", pick(g.r, countries[g.country].cities))
	}
}

// filler appends exactly n words that carry no verb: prepositional phrases first, then at most one adverb.
func (g *docGen) filler(n int) {
	rem := n
	adverb := false
	for rem > 0 {
		if rem == 1 {
			adverb = true
			break
		}
		l := 2 + g.r.intn(min(4, rem)-1) // in [2, min(4, rem)]
		rem -= l
		g.chunk(l)
	}
	if adverb {
		g.word(pick(g.r, adverbs))
	}
}

func (g *docGen) chunk(l int) {
	t := &topics[g.topic]
	k := &countries[g.country]
	switch l {
	case 2:
		switch g.r.intn(3) {
		case 0:
			g.words(pick(g.r, []string{"in", "from"}), pick(g.r, k.cities))
		default:
			g.words(pick(g.r, timePhrases)...)
		}
	case 3:
		switch g.r.intn(3) {
		case 0:
			g.words(pick(g.r, []string{"at", "near"}), "the", pick(g.r, t.places))
		case 1:
			g.words("with", "the", pick(g.r, t.agents)[plural]) // a plural attractor
		default:
			g.words(pick(g.r, dayPhrases)...)
		}
	default:
		switch g.r.intn(3) {
		case 0:
			g.words("near", "the", pick(g.r, []string{"old", "big", "new"}), pick(g.r, t.places))
		case 1:
			g.words("with", "the", k.demonym, pick(g.r, t.agents)[plural])
		default:
			g.words(pick(g.r, longPhrases)...)
		}
	}
}

// introduction: "<Name> is a <role> from <city>."
func (g *docGen) introduction() {
	g.beginSentence(singular)
	subj := g.word(names[g.gender][g.name])
	v := g.word(copula[singular])
	g.agree(ConceptNumber, singular, subj, v, copula[plural], true)
	role := roles[g.role][g.gender]
	g.words(article(role), role, "from", pick(g.r, countries[g.country].cities))
	g.endSentence()
}

// numberSentence: subject, k-1 filler words, agreeing verb, object, optional place.
func (g *docGen) numberSentence(k int) {
	number := g.r.intn(2)
	g.beginSentence(number)
	var head int32
	if number == singular {
		if g.r.intn(2) == 0 {
			head = g.referent()
		} else {
			g.word("the")
			head = g.word(pick(g.r, topics[g.topic].agents)[singular])
		}
	} else {
		switch g.r.intn(3) {
		case 0:
			g.word("the")
			head = g.word(pick(g.r, topics[g.topic].agents)[plural])
		case 1:
			g.word(pronounPoss[g.gender])
			head = g.word(pick(g.r, companions))
		default:
			g.word("the")
			head = g.word(rolesPlural[g.role][g.gender])
		}
	}
	g.filler(k - 1)
	g.verb(number, head, true)
	g.thing(1 + g.r.intn(2))
	if g.r.intn(2) == 0 {
		g.placePhrase()
	}
	g.endSentence()
}

// genderSentence: the referent, then a reflexive (k = 1) or possessive (k >= 2) exactly k words later.
func (g *docGen) genderSentence(k int) {
	g.beginSentence(singular)
	ctrl := g.referent()
	other := 1 - g.gender
	switch {
	case k == 1:
		t := g.word(pronounRefl[g.gender])
		g.agree(ConceptGender, g.gender, ctrl, t, pronounRefl[other], true)
		g.verb(singular, ctrl, false)
		g.thing(2)
	case k == 2:
		g.verb(singular, ctrl, false)
		t := g.word(pronounPoss[g.gender])
		g.agree(ConceptGender, g.gender, ctrl, t, pronounPoss[other], true)
		g.thing(1)
	default:
		g.verb(singular, ctrl, false)
		gap := k - 3 // words between the verb and the preposition
		if gap >= 2 && g.r.intn(2) == 0 {
			g.thing(2)
			gap -= 2
		}
		g.filler(gap)
		g.word(pick(g.r, []string{"with", "for"}))
		t := g.word(pronounPoss[g.gender])
		g.agree(ConceptGender, g.gender, ctrl, t, pronounPoss[other], true)
		g.word(pick(g.r, companions))
	}
	g.endSentence()
}

// travelSentence: "<referent> visits <city> in <country>." or "The <demonym> <agents> <verb> <thing>."
func (g *docGen) travelSentence() {
	k := &countries[g.country]
	if g.r.intn(2) == 0 {
		g.beginSentence(singular)
		subj := g.referent()
		v := pick(g.r, travelVerbs)
		t := g.word(v[singular])
		g.agree(ConceptNumber, singular, subj, t, v[plural], true)
		g.words(pick(g.r, k.cities), "in", k.name)
	} else {
		g.beginSentence(plural)
		g.words("the", k.demonym)
		head := g.word(pick(g.r, topics[g.topic].agents)[plural])
		g.verb(plural, head, true)
		g.thing(2)
	}
	g.endSentence()
}
