package plot

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTable_StringAndHTML(t *testing.T) {
	tb := &Table{Title: "T", Header: []string{"a", "bb"}, Rows: [][]string{{"xyz", "<1>"}}, Note: "n"}
	require.Equal(t, "T\na    bb\nxyz  <1>\nn\n", tb.String())
	s := tb.RenderSnippet()
	require.Contains(t, s.Element, "&lt;1&gt;")
	require.Contains(t, s.Element, `id="table_`)
	require.Contains(t, s.Option, `"text":"T"`)
	require.Equal(t, "T", renderFragment(tb).title, "Display and Export read the title from the option")
}
