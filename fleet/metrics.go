package fleet

import (
	"fmt"
	"io"
	"strconv"
)

// metric is one sample of the Prometheus text exposition format (version 0.0.4).
type metric struct {
	name, help, kind string // kind: "gauge" or "counter"
	value            float64
	// labels, when not empty, are the sample's labels besides node (`cause="fleet"`);
	// samples of one name are consecutive and share the first one's HELP and TYPE.
	labels string
}

// writePrometheus writes ms in the Prometheus text format, each name with its HELP and
// TYPE lines once, and every sample with the label node="id". O(len(ms)).
func writePrometheus(w io.Writer, id int, ms []metric) error {
	prev := ""
	for _, m := range ms {
		if m.name != prev {
			if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", m.name, m.help, m.name, m.kind); err != nil {
				return err
			}
			prev = m.name
		}
		labels := fmt.Sprintf("node=\"%d\"", id)
		if m.labels != "" {
			labels += "," + m.labels
		}
		if _, err := fmt.Fprintf(w, "%s{%s} %s\n", m.name, labels, strconv.FormatFloat(m.value, 'g', -1, 64)); err != nil {
			return err
		}
	}
	return nil
}
