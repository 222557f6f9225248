package steer

import (
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/protolab/protolab/workbench/data"
)

// Multiple-choice tasks derived from the synthetic concept corpus's labels (spec §9's tasks are unknown; ours).
// Each item is a document prefix and candidate next words; the correct one is the word the document has there.
const (
	// TaskNumber: the verb after a subject, in the subject's number or the other ("plays" / "play"), from the
	// corpus's number-agreement dependencies (distances 1–MaxDistance words).
	TaskNumber = "number"
	// TaskGender: the possessive or reflexive after the referent, in its gender or the other ("her" / "his").
	TaskGender = "gender"
	// TaskTopic: a topic verb agreeing with its subject against verbs of the same number from other topics
	// ("bakes" in a food document against "kicks", "paints"…): the document's topic decides.
	TaskTopic = "topic"
	// TaskCountry: the city a referent visits against cities of other countries: the document's country decides.
	TaskCountry = "country"
)

// AllTasks lists the tasks BuildTasks knows, in the order of the presets.
var AllTasks = []string{TaskNumber, TaskGender, TaskTopic, TaskCountry}

// Item is one multiple-choice item: a document prefix and candidate continuations.
type Item struct {
	Context string   `json:"context"` // the document text before the answer, without the separating space
	Options []string `json:"options"` // candidate next words, each with its leading space (" plays")
	Correct int      `json:"correct"` // index of the word the document has
	Doc     int      `json:"doc"`     // document index in the corpus the item comes from
}

// Task is a named list of multiple-choice items.
type Task struct {
	Name  string `json:"name"`
	Items []Item `json:"items"`
}

// BuildTasks derives the named tasks (AllTasks) from a labelled synthetic corpus: for each, up to perTask items
// drawn uniformly (seeded) from every eligible position of the corpus. The topic and country tasks have numOptions
// options (the correct word and words of numOptions−1 distinct other topics or countries, drawn from the words
// the corpus uses in that slot); number and gender have 2. Option order is shuffled. It returns an error for an
// unlabelled corpus, a corpus without the concept a task needs, an unknown task, numOptions < 2, or a task with
// fewer than 2 items.
func BuildTasks(c *data.Corpus, names []string, perTask, numOptions int, seed uint64) ([]Task, error) {
	if c == nil || c.Labels == nil {
		return nil, errors.New("steer.BuildTasks: the corpus has no labels (the tasks need the synthetic concept " +
			"corpus)")
	}
	if perTask < 2 || numOptions < 2 {
		return nil, errors.Errorf("steer.BuildTasks: per_task=%d, options=%d, want both ≥ 2", perTask, numOptions)
	}
	concept := map[string]int{}
	for _, name := range []string{"number", "gender", "topic", "country"} {
		ci, err := c.ConceptIndex(name)
		if err != nil {
			return nil, errors.WithMessage(err, "steer.BuildTasks")
		}
		concept[name] = ci
	}
	var out []Task
	for ti, name := range names {
		var cands []candidate
		switch name {
		case TaskNumber, TaskGender:
			cands = agreementCandidates(c, concept[name])
		case TaskTopic:
			cands = poolCandidates(c, numOptions, func(l *data.DocLabels, a data.Agreement) (int32, int, bool) {
				// A topic verb: a number-agreement target marked with a topic; pool key (topic, number).
				t := l.Marked[concept["topic"]][a.Target]
				return a.Target, int(t)*2 + int(a.Value), a.Concept == concept["number"] && t >= 0
			}, func(key int) int { return key / 2 }, func(key int) int { return key % 2 })
		case TaskCountry:
			cands = poolCandidates(c, numOptions, func(l *data.DocLabels, a data.Agreement) (int32, int, bool) {
				// A travel sentence: the verb is followed by a country-marked word, the city visited.
				w := a.Target + 1
				if a.Concept != concept["number"] || int(w) >= len(l.Starts) {
					return 0, 0, false
				}
				k := l.Marked[concept["country"]][w]
				return w, int(k), k >= 0
			}, func(key int) int { return key }, func(int) int { return 0 })
		default:
			return nil, errors.Errorf("steer.BuildTasks: unknown task %q (want one of %v)", name, AllTasks)
		}
		rng := rand.New(rand.NewPCG(seed, uint64(ti)+0x7a5c))
		rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		task := Task{Name: name}
		for _, cd := range cands {
			if len(task.Items) == perTask {
				break
			}
			task.Items = append(task.Items, cd.item(c, rng))
		}
		if len(task.Items) < 2 {
			return nil, errors.Errorf("steer.BuildTasks: task %q has %d items in corpus %q; use more documents",
				name, len(task.Items), c.Source)
		}
		out = append(out, task)
	}
	return out, nil
}

// candidate is an eligible position: document doc, answer word index word, and the wrong options to draw from
// (one list per alternative value; one option is drawn from each of `draw` of them).
type candidate struct {
	doc, word int
	wrong     [][]string
	draw      int
}

func (cd candidate) item(c *data.Corpus, rng *rand.Rand) Item {
	l := &c.Labels[cd.doc]
	text := c.Texts[cd.doc]
	answer := text[l.Starts[cd.word]:l.Ends[cd.word]]
	opts := []string{" " + answer}
	for _, vi := range rng.Perm(len(cd.wrong))[:cd.draw] {
		pool := cd.wrong[vi]
		opts = append(opts, " "+pool[rng.IntN(len(pool))])
	}
	perm := rng.Perm(len(opts))
	it := Item{Context: strings.TrimRight(text[:l.Starts[cd.word]], " "), Doc: cd.doc,
		Options: make([]string, len(opts))}
	for i, p := range perm {
		it.Options[i] = opts[p]
		if p == 0 {
			it.Correct = i
		}
	}
	return it
}

// agreementCandidates lists the targets of concept ci's agreement dependencies with their alternative form.
func agreementCandidates(c *data.Corpus, ci int) []candidate {
	var out []candidate
	for d, l := range c.Labels {
		for _, a := range l.Agreements {
			if a.Concept != ci || a.Alternative == "" {
				continue
			}
			alt := a.Alternative
			if w := c.Texts[d][l.Starts[a.Target]:l.Ends[a.Target]]; w != "" && w[0] >= 'A' && w[0] <= 'Z' {
				alt = strings.ToUpper(alt[:1]) + alt[1:]
			}
			out = append(out, candidate{doc: d, word: int(a.Target), wrong: [][]string{{alt}}, draw: 1})
		}
	}
	return out
}

// poolCandidates lists the words pick selects (from the agreements of every document) with a pool key; the wrong
// options of a word with key k are the pools of keys with another value(k) and the same group(k), from which
// numOptions−1 distinct values are drawn. Words whose group has too few other values are left out.
func poolCandidates(c *data.Corpus, numOptions int, pick func(*data.DocLabels, data.Agreement) (int32, int, bool),
	value, group func(int) int) []candidate {
	type pos struct{ doc, word, key int }
	var found []pos
	pools := map[int][]string{}
	for d := range c.Labels {
		l := &c.Labels[d]
		for _, a := range l.Agreements {
			w, key, ok := pick(l, a)
			if !ok {
				continue
			}
			word := c.Texts[d][l.Starts[w]:l.Ends[w]]
			if !slices.Contains(pools[key], word) {
				pools[key] = append(pools[key], word)
			}
			found = append(found, pos{d, int(w), key})
		}
	}
	keys := make([]int, 0, len(pools))
	for k := range pools {
		slices.Sort(pools[k]) // map order must not reach the draws
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []candidate
	for _, p := range found {
		var wrong [][]string
		for _, k := range keys {
			if value(k) != value(p.key) && group(k) == group(p.key) {
				wrong = append(wrong, pools[k])
			}
		}
		if len(wrong) >= numOptions-1 {
			out = append(out, candidate{doc: p.doc, word: p.word, wrong: wrong, draw: numOptions - 1})
		}
	}
	return out
}
