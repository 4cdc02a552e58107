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
}

// writePrometheus writes ms in the Prometheus text format, each with its HELP and TYPE
// lines and the label node="id". O(len(ms)).
func writePrometheus(w io.Writer, id int, ms []metric) error {
	for _, m := range ms {
		if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s{node=\"%d\"} %s\n",
			m.name, m.help, m.name, m.kind, m.name, id, strconv.FormatFloat(m.value, 'g', -1, 64)); err != nil {
			return err
		}
	}
	return nil
}
