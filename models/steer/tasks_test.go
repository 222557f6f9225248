package steer

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/protolab/protolab/workbench/data"
)

// conceptValueOf returns the value of concept whose synthetic word list contains word, or "".
func conceptValueOf(t *testing.T, concept, word string) string {
	t.Helper()
	for _, c := range data.DefaultSyntheticConfig().Concepts() {
		if c.Name != concept {
			continue
		}
		for _, v := range c.Values {
			ws, err := data.SyntheticWords(concept, v)
			require.NoError(t, err)
			if slices.Contains(ws, word) {
				return v
			}
		}
	}
	return ""
}

// TestBuildTasks_OptionsFollowTheLabels builds every task from 60 synthetic documents and checks each item against
// the corpus: the context is the document's prefix, the correct option is the word that follows it, the number and
// gender options are the two forms of one word, and the topic and country options name distinct values, the
// correct one being the document's.
func TestBuildTasks_OptionsFollowTheLabels(t *testing.T) {
	sc := data.DefaultSyntheticConfig()
	sc.NumDocs = 60
	c, err := data.Synthetic(sc)
	require.NoError(t, err)
	tasks, err := BuildTasks(c, AllTasks, 40, 4, 3)
	require.NoError(t, err)
	require.Len(t, tasks, len(AllTasks))
	topicIdx, err := c.ConceptIndex("topic")
	require.NoError(t, err)
	countryIdx, err := c.ConceptIndex("country")
	require.NoError(t, err)
	correctAt := make([]int, 4)
	for ti, task := range tasks {
		require.Equal(t, AllTasks[ti], task.Name)
		// 60 documents have more than 40 positions for every task but country (travel sentences are rarer).
		require.True(t, len(task.Items) == 40 || task.Name == TaskCountry && len(task.Items) >= 20, "%s: %d items",
			task.Name, len(task.Items))
		for _, it := range task.Items {
			text := c.Texts[it.Doc]
			require.True(t, strings.HasPrefix(text, it.Context))
			answer := it.Options[it.Correct]
			require.True(t, strings.HasPrefix(text[len(it.Context):], answer+" ") ||
				strings.HasPrefix(text[len(it.Context):], answer+"."), "doc %d: %q does not follow %q", it.Doc, answer,
				it.Context)
			require.Len(t, slices.Compact(slices.Sorted(slices.Values(it.Options))), len(it.Options),
				"distinct options")
			correctAt[it.Correct%4]++
			switch task.Name {
			case TaskNumber, TaskGender:
				require.Len(t, it.Options, 2)
				concept := map[string]string{TaskNumber: "number", TaskGender: "gender"}[task.Name]
				v0 := conceptValueOf(t, concept, strings.TrimSpace(it.Options[0]))
				v1 := conceptValueOf(t, concept, strings.TrimSpace(it.Options[1]))
				require.NotEmpty(t, v0)
				require.NotEmpty(t, v1)
				require.NotEqual(t, v0, v1, "the two options carry the two %s values", concept)
			case TaskTopic, TaskCountry:
				require.Len(t, it.Options, 4)
				concept, ci := "topic", topicIdx
				if task.Name == TaskCountry {
					concept, ci = "country", countryIdx
				}
				var values []string
				for _, o := range it.Options {
					v := conceptValueOf(t, concept, strings.TrimSpace(o))
					require.NotEmpty(t, v, "option %q marks no %s", o, concept)
					values = append(values, v)
				}
				require.Len(t, slices.Compact(slices.Sorted(slices.Values(values))), 4, "options of distinct %ss",
					concept)
				docValue := c.Concepts[ci].Values[c.Labels[it.Doc].InForce[ci][0]]
				require.Equal(t, docValue, values[it.Correct], "the correct option is the document's %s", concept)
			}
		}
	}
	for pos, n := range correctAt {
		require.Greater(t, n, 0, "the correct option is sometimes at position %d", pos)
	}

	_, err = BuildTasks(c, []string{"colour"}, 10, 4, 3)
	require.ErrorContains(t, err, "unknown task")
	again, err := BuildTasks(c, AllTasks, 40, 4, 3)
	require.NoError(t, err)
	require.Equal(t, tasks, again, "same seed, same tasks")
}
