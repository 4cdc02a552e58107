package fleet

import (
	"strings"
	"testing"
)

// TestWritePrometheus: HELP and TYPE once per name, every sample labelled with the
// node, extra labels after it, and values in their shortest exact form (12345, not
// 1e+04).
func TestWritePrometheus(t *testing.T) {
	var b strings.Builder
	err := writePrometheus(&b, 7, []metric{
		{name: "tokendist_refused_total", help: "Frames refused.", kind: "counter", value: 12345, labels: `cause="fleet"`},
		{name: "tokendist_refused_total", help: "Frames refused.", kind: "counter", value: 2, labels: `cause="to"`},
		{name: "tokendist_load", help: "Tokens held.", kind: "gauge", value: 0.25},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `# HELP tokendist_refused_total Frames refused.
# TYPE tokendist_refused_total counter
tokendist_refused_total{node="7",cause="fleet"} 12345
tokendist_refused_total{node="7",cause="to"} 2
# HELP tokendist_load Tokens held.
# TYPE tokendist_load gauge
tokendist_load{node="7"} 0.25
`
	if got := b.String(); got != want {
		t.Errorf("writePrometheus wrote\n%s\nwant\n%s", got, want)
	}
}

// TestStatusMetricsClock: the round clock and its catch-ups are on /metrics as on
// /status (Status.Now, Status.CaughtUp), with their own values.
func TestStatusMetricsClock(t *testing.T) {
	var b strings.Builder
	if err := writePrometheus(&b, 3, Status{Now: 4500, CaughtUp: 321}.metrics()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE tokendist_node_clock_ticks gauge\n", `tokendist_node_clock_ticks{node="3"} 4500` + "\n",
		"# TYPE tokendist_node_caught_up_ticks_total counter\n", `tokendist_node_caught_up_ticks_total{node="3"} 321` + "\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
