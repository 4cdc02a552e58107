package experiment

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/registry"
)

// fuzzNames are registry names the structured fuzzer picks from (valid and not).
var (
	fuzzNets  = []string{"ring", "path", "star", "hypercube", "torus", "complete", "random-regular", "kary-tree", "edge-list", "dot", "nope", ""}
	fuzzLoads = []string{"point-mass", "constant", "random-range", "explicit", "uniform-random", "bogus"}
	fuzzAlgs  = []string{"threshold-1", "threshold-2", "rsw-diffusion", "randomized-diffusion", "random-matching", "multi-balance", "perfect-tree", "ring", "x"}
	fuzzKeys  = []string{"n", "d", "sides", "tokens", "per_node", "lo", "hi", "loads", "file", "groups", "seed", "h", "k", "bogus"}
	fuzzTops  = []string{"stop", "seeds", "record", "zip", "workload", "churn", "steady", "quick", "name", "description", "bogus"}
)

// fuzzExperiment builds an experiment file from the fuzzer's choices: the structure is
// valid YAML of the file's shape most of the time, the values hostile, and raw text is
// appended to break the shape too.
func fuzzExperiment(net, load, alg, key, top uint8, a, b, c int64, val, raw string) string {
	pick := func(l []string, i uint8) string { return l[int(i)%len(l)] }
	var s strings.Builder
	fmt.Fprintf(&s, "networks:\n  - name: %s\n    %s: %d\n", pick(fuzzNets, net), pick(fuzzKeys, key), a%100)
	if a%3 == 0 {
		fmt.Fprintf(&s, "    %s: [%d, %d]\n", pick(fuzzKeys, key+1), b%50, c%50)
	}
	fmt.Fprintf(&s, "loads:\n  - name: %s\n    tokens: %d\n", pick(fuzzLoads, load), b)
	fmt.Fprintf(&s, "algorithms: [%s, %s]\n", pick(fuzzAlgs, alg), pick(fuzzAlgs, alg/3))
	switch t := pick(fuzzTops, top); t {
	case "stop":
		fmt.Fprintf(&s, "stop:\n  max_steps: %d\n  target: %d\n", c, a)
	case "seeds":
		fmt.Fprintf(&s, "seeds: %d\n", c%64)
	case "zip":
		fmt.Fprintf(&s, "zip: [[network.%s, loads.tokens]]\n", pick(fuzzKeys, key))
	case "workload":
		fmt.Fprintf(&s, "workload:\n  name: poisson\n  rate: %q\n", val)
	case "quick":
		fmt.Fprintf(&s, "quick:\n  seeds: %d\n", c%64)
	default:
		fmt.Fprintf(&s, "%s: %q\n", t, val)
	}
	s.WriteString(raw)
	return s.String()
}

// FuzzExperimentFile fuzzes the experiment-file format with mutated structure and
// values: Parse either fails with an error that starts with the prefix and the file
// name, is not too long and names no more than 48 bytes of a value, or returns a file
// whose grid expands to distinct, deterministic runs within MaxRuns.
func FuzzExperimentFile(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(0), uint8(0), uint8(1), int64(8), int64(40), int64(3), "x", "")
	f.Add(uint8(3), uint8(1), uint8(2), uint8(1), uint8(0), int64(4), int64(7), int64(100), "0.5", "record:\n  trace: true\n")
	f.Add(uint8(4), uint8(2), uint8(5), uint8(2), uint8(2), int64(3), int64(-1), int64(2), "", "\n---\n")
	f.Add(uint8(1), uint8(3), uint8(3), uint8(7), uint8(4), int64(9), int64(1<<40), int64(-5), "1e400", "seeds: [1, 1]\n")
	reg := registry.New()
	f.Fuzz(func(t *testing.T, net, load, alg, key, top uint8, a, b, c int64, val, raw string) {
		if len(raw) > 4096 || len(val) > 4096 {
			return
		}
		text := fuzzExperiment(net, load, alg, key, top, a, b, c, val, raw)
		start := time.Now()
		fl, err := Parse("fuzz.yaml", []byte(text), reg, false)
		require.Less(t, time.Since(start), 5*time.Second, "Parse took %v on %q", time.Since(start), text)
		if err != nil {
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, "tokendist: fuzz.yaml"), "error without the prefix and file: %.300s", msg)
			require.Less(t, len(msg), 4096+200, "error of %d bytes", len(msg))
			return
		}
		runs, err := fl.Specs()
		require.NoError(t, err, "Parse accepted a file whose Specs fail")
		require.LessOrEqual(t, len(runs), MaxRuns)
		seen := map[string]bool{}
		for i, r := range runs {
			require.Equal(t, i, r.Index)
			require.False(t, seen[r.Key], "run key %s twice", r.Key)
			seen[r.Key] = true
		}
		again, err := Parse("fuzz.yaml", []byte(text), reg, false)
		require.NoError(t, err, "the second parse fails")
		runs2, err := again.Specs()
		require.NoError(t, err)
		require.Equal(t, len(runs), len(runs2))
		for i := range runs {
			require.Equal(t, runs[i].Key, runs2[i].Key, "keys differ between two parses")
		}
	})
}
