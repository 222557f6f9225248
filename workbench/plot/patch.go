package plot

import (
	"encoding/json"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
)

// bandIDPrefix marks the helper series that draw error bands.
const bandIDPrefix = "band-"

// patcher edits the final option map of a chart, for echarts options that go-echarts v2.6.7 has no typed
// field for (series silent / tooltip.show, numeric axisLabel.interval).
type patcher struct {
	charts.BaseConfigurationVisitor
	fns []func(option map[string]any)
}

// Visit implements charts.ConfigurationVisitor; go-echarts calls it after all built-in options are set.
func (p patcher) Visit(option map[string]any) {
	for _, fn := range p.fns {
		fn(option)
	}
}

// asMaps converts a go-echarts list value (series, axes) into generic maps through JSON, or returns nil.
func asMaps(v any) []map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return out
}

// quietBands makes error-band series silent, hides them from tooltips and draws them under the lines.
func quietBands(option map[string]any) {
	series := asMaps(option["series"])
	if series == nil {
		return
	}
	for _, s := range series {
		if id, _ := s["id"].(string); strings.HasPrefix(id, bandIDPrefix) {
			s["silent"] = true
			s["tooltip"] = map[string]any{"show": false}
			s["z"] = 1
			s["emphasis"] = map[string]any{"disabled": true}
		}
	}
	option["series"] = series
}

// allAxisLabels returns a patch that shows every category label on the named axis ("xAxis" or "yAxis").
// echarts wants a number here; go-echarts' AxisLabel.Interval is a string, which echarts would concatenate.
func allAxisLabels(axis string) func(map[string]any) {
	return func(option map[string]any) {
		axes := asMaps(option[axis])
		if axes == nil {
			return
		}
		for _, a := range axes {
			label, _ := a["axisLabel"].(map[string]any)
			if label == nil {
				label = map[string]any{}
			}
			label["interval"] = 0
			a["axisLabel"] = label
		}
		option[axis] = axes
	}
}
