package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/faults"
	"github.com/tokendist/tokendist/registry"
)

const goodFile = `name: good
networks:
  - name: kary-tree
    height: [2, 3]
  - name: torus
    sides: [[4, 4], [8, 8]]
loads:
  - name: random-range
    hi: [10, 20]
algorithms:
  - name: threshold-1
    spanning_tree: true
  - name: discrepancy-1
    spanning_tree: true
stop:
  max_steps: 1000
seeds: 2
record:
  metrics: [threshold1_bound]
`

func parse(t *testing.T, text string, quick bool) (*File, error) {
	t.Helper()
	return Parse("exp.yaml", []byte(text), registry.New(), quick)
}

func TestGrid(t *testing.T) {
	f, err := parse(t, goodFile, false)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Specs()
	if err != nil {
		t.Fatal(err)
	}
	// kary-tree: 2 heights × 2 hi × 2 algorithms × 2 seeds; torus: 2 sides × 2 × 2 × 2.
	if len(runs) != 16+16 {
		t.Errorf("%d runs, want 32", len(runs))
	}
	keys := map[string]bool{}
	for i, r := range runs {
		if r.Index != i || keys[r.Key] {
			t.Errorf("run %d: index %d, duplicate key %v", i, r.Index, keys[r.Key])
		}
		keys[r.Key] = true
	}
	if got := runs[len(runs)-1].Network; got != "torus(sides=[8, 8])" {
		t.Errorf("last network %q", got)
	}
	zipped := strings.Replace(goodFile, "seeds: 2", "seeds: [5, 9]\nzip: [[network.height, loads.hi]]", 1)
	f, err = parse(t, zipped, false)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ = f.Specs()
	// kary-tree: (2 zipped) × 2 alg × 2 seeds = 8; torus (no height): 2 sides × 2 hi × 2 × 2 = 16.
	if len(runs) != 8+16 {
		t.Errorf("zipped: %d runs, want 24", len(runs))
	}
	for _, r := range runs[:8] {
		h := r.Spec.Network.Params["height"].(int64)
		hi := r.Spec.Loads.Params["hi"].(int64)
		if hi != 10*h-10 {
			t.Errorf("zip broken: height %d with hi %d", h, hi)
		}
		if r.Spec.Seed != 5 && r.Spec.Seed != 9 {
			t.Errorf("seed %d", r.Spec.Seed)
		}
	}
	// Quick variant and the key's independence from spelling out defaults.
	q := goodFile + "quick:\n  seeds: 1\n  networks:\n    - name: kary-tree\n      height: 2\n      arity: 2\n"
	f, err = parse(t, q, true)
	if err != nil {
		t.Fatal(err)
	}
	qr, _ := f.Specs()
	if len(qr) != 4 {
		t.Errorf("quick: %d runs, want 4", len(qr))
	}
	full, _ := parse(t, goodFile, false)
	fr, _ := full.Specs()
	if qr[0].Key != fr[0].Key {
		t.Errorf("explicit default arity changed the key: %s vs %s", qr[0].Key, fr[0].Key)
	}
}

// TestBadFiles: every bad file gets an error naming the file, the line and the key.
func TestBadFiles(t *testing.T) {
	base := "networks:\n  - name: path\n    n: 8\nloads:\n  - name: point-mass\n    tokens: 10\nalgorithms: [threshold-1]\n"
	for _, tc := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"yaml syntax", "networks: [path\n", 0, "not valid YAML"},
		{"not a mapping", "- a\n- b\n", 1, "must be a mapping"},
		{"unknown top key", base + "sedes: 3\n", 8, `sedes: unknown key (allowed: name, description, networks`},
		{"missing loads", "networks: [path]\nalgorithms: [threshold-1]\n", 1, "loads: missing"},
		{"unknown network", strings.Replace(base, "name: path", "name: pathh", 1), 2, `unknown network "pathh" (known: barabasi-albert, complete, dot, edge-list,`},
		{"unknown param", strings.Replace(base, "n: 8", "m: 8", 1), 3, "networks[0].m: network path has no such parameter (parameters: n)"},
		{"wrong type", strings.Replace(base, "n: 8", "n: eight", 1), 3, `networks[0].n: parameter n: want int, got "eight"`},
		{"wrong type in list", strings.Replace(base, "n: 8", "n: [8, x]", 1), 3, `parameter n: want int, got "x"`},
		{"float for int", strings.Replace(base, "n: 8", "n: 8.5", 1), 3, "want int"},
		{"missing required", strings.Replace(base, "    n: 8\n", "", 1), 2, "networks[0].n: missing required parameter of network path (int"},
		{"bad coloring", strings.Replace(base, "algorithms: [threshold-1]", "algorithms:\n  - name: threshold-1\n    coloring: vizing", 1), 9, "allowed: default, bipartite, misra-gries"},
		{"bad bool", strings.Replace(base, "algorithms: [threshold-1]", "algorithms:\n  - name: threshold-1\n    spanning_tree: maybe", 1), 9, "spanning_tree: parameter spanning_tree: want bool"},
		{"unknown stop key", base + "stop:\n  max_step: 5\n", 9, "stop.max_step: unknown key (allowed: max_steps, tau, target, no_stability, stop_when_stable)"},
		{"negative stop", base + "stop:\n  max_steps: -5\n", 9, "stop.max_steps: -5 is negative"},
		{"seeds zero", base + "seeds: 0\n", 8, "seeds: want a count"},
		{"seeds repeated", base + "seeds: [1, 2, 1]\n", 8, "seed 1 repeated"},
		{"seeds string", base + "seeds: [a]\n", 8, "want a non-negative integer seed"},
		{"unknown metric", base + "record:\n  metrics: [msdd]\n", 9, `unknown metric "msdd" (known:`},
		{"unknown record key", base + "record:\n  traces: true\n", 9, "record.traces: unknown key (allowed: metrics, sample_every, trace)"},
		{"bad trace", base + "record:\n  trace: 3\n", 9, "record.trace: want true or false"},
		{"zip not list field", base + "zip: [[network.n, loads.tokens]]\n", 8, `"network.n" is not a list-valued field`},
		{"zip lengths", strings.Replace(strings.Replace(base, "n: 8", "n: [8, 9]", 1), "tokens: 10", "tokens: [1, 2, 3]", 1) + "zip: [[network.n, loads.tokens]]\n", 6, "zipped with network.n, so it needs 2 values, has 3"},
		{"zip single", base + "zip: [[network.n]]\n", 8, "at least two fields"},
		{"repeated key", base + "seeds: 1\nseeds: 2\n", 9, "seeds: repeated key"},
		{"network not mapping", strings.Replace(base, "  - name: path\n    n: 8\n", "  - [path]\n", 1), 2, "want a mapping with a name"},
		{"no name", strings.Replace(base, "  - name: path\n    n: 8\n", "  - n: 8\n", 1), 2, "networks[0].name: missing"},
		{"quick unknown", base + "quick:\n  sedes: 1\n", 9, "quick.sedes: unknown key"},
		{"empty list", strings.Replace(base, "n: 8", "n: []", 1), 3, "empty list"},
		{"two documents", base + "---\nname: x\n", 8, "more than one YAML document"},
		{"null value", strings.Replace(base, "n: 8", "n:", 1), 3, "missing value"},
		{"huge int", strings.Replace(base, "n: 8", "n: 99999999999999999999999", 1), 3, "n:"},
		{"unknown workload", base + "workload: [{name: poison, rate: 1}]\n", 8, `workload[0].name: unknown workload "poison" (known: adversary, hotspot, poisson`},
		{"workload bad param", base + "workload:\n  - name: poisson\n    rate: fast\n", 10, `workload[0].rate: parameter rate: want float, got "fast"`},
		{"workload unknown param", base + "workload:\n  - name: service\n    rate: 0.1\n", 10, "workload[0].rate: workload service has no such parameter (parameters: mu)"},
		{"workload missing param", base + "workload: [poisson]\n", 8, "workload[0]: workload poisson needs parameter rate"},
		{"workload negative rate", base + "workload:\n  - {name: poisson, rate: -1}\n", 9, "workload[0]: workload poisson:"},
		{"workload axis", base + "workload:\n  - name: poisson\n    rate: [0.1, 0.2]\n", 10, "workload[0].rate: want a single value"},
		{"churn bad", base + "churn: {name: random-churn, fail: 2, recover: 0.1}\n", 8, "churn: churn random-churn:"},
		{"steady key", base + "steady:\n  warmup: 10\n", 9, "steady.warmup: unknown key (allowed: warm_up, every)"},
		{"steady negative", base + "steady:\n  warm_up: -1\n", 9, "steady.warm_up: want a non-negative integer"},
		{"sides not ints", "networks:\n  - name: torus\n    sides: [a, b]\nloads:\n  - name: point-mass\n    tokens: 1\nalgorithms: [threshold-1]\n", 3, "list of ints"},
	} {
		_, err := parse(t, tc.text, false)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !errors.Is(err, ErrFile) {
			t.Errorf("%s: error %v is not ErrFile", tc.name, err)
		}
		msg := err.Error()
		prefix := "tokendist: exp.yaml"
		if tc.line > 0 {
			prefix += ":" + strconv.Itoa(tc.line) + ": "
		}
		if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.want) {
			t.Errorf("%s:\n got  %s\n want prefix %q and %q", tc.name, msg, prefix, tc.want)
		}
	}
}

func TestBadFileLineNumbersAlways(t *testing.T) {
	// Every error from a file that parses as YAML names a line.
	dir := t.TempDir()
	p := filepath.Join(dir, "x.yaml")
	os.WriteFile(p, []byte("networks: [nope]\nloads: [point-mass]\nalgorithms: [threshold-1]\n"), 0o644)
	_, err := ReadFile(p, registry.New(), false)
	if err == nil || !strings.Contains(err.Error(), p+":1: networks[0]") {
		t.Errorf("got %v", err)
	}
	_, err = ReadFile(filepath.Join(dir, "missing.yaml"), registry.New(), false)
	if err == nil || !errors.Is(err, ErrFile) {
		t.Errorf("missing file: %v", err)
	}
}

func TestShardFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		env   func(string) string
		count int
		want  Shard
		ok    bool
		err   bool
	}{
		{env(), 0, Shard{}, false, false},
		{env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4"), 0, Shard{2, 4}, true, false},
		{env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_MIN", "3", "SLURM_ARRAY_TASK_MAX", "6"), 0, Shard{2, 4}, true, false},
		{env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_COUNT", "4"), 0, Shard{0, 4}, true, false},
		{env("SLURM_ARRAY_TASK_ID", "2"), 0, Shard{}, false, true},
		{env("SLURM_ARRAY_TASK_ID", "x", "SLURM_ARRAY_TASK_COUNT", "4"), 0, Shard{}, false, true},
		{env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "4"), 0, Shard{}, false, true},
		{env("JOB_COMPLETION_INDEX", "3"), 8, Shard{3, 8}, true, false},
		{env("JOB_COMPLETION_INDEX", "3", "TOKENDIST_SHARDS", "5"), 0, Shard{3, 5}, true, false},
		{env("JOB_COMPLETION_INDEX", "3"), 0, Shard{}, false, true},
	} {
		s, ok, err := ShardFromEnv(tc.env, tc.count)
		if s != tc.want || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("got %v %v %v, want %v %v err=%v", s, ok, err, tc.want, tc.ok, tc.err)
		}
	}
	for _, s := range []string{"1/0", "4/4", "-1/2", "a/b", "1"} {
		if _, err := ParseShard(s); err == nil {
			t.Errorf("ParseShard(%q) accepted", s)
		}
	}
	// Shards are disjoint and cover the grid.
	var runs []Run
	for i := 0; i < 23; i++ {
		runs = append(runs, Run{Index: i})
	}
	seen := map[int]int{}
	for i := 0; i < 4; i++ {
		for _, r := range Select(runs, Shard{i, 4}) {
			seen[r.Index]++
		}
	}
	for i := 0; i < 23; i++ {
		if seen[i] != 1 {
			t.Errorf("run %d in %d shards", i, seen[i])
		}
	}
}

func TestGridTooLarge(t *testing.T) {
	text := "networks:\n  - name: path\n    n: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]\nloads:\n  - name: point-mass\n    tokens: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]\n" +
		"algorithms: [threshold-1]\nseeds: 100000\n"
	_, err := parse(t, text, false)
	if err == nil || !strings.Contains(err.Error(), "exp.yaml:2: the grid has more than") {
		t.Errorf("got %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(goodFile)
	f.Add("networks: [path]\nloads: [point-mass]\nalgorithms: [threshold-1]\n")
	f.Add("networks:\n  - name: torus\n    sides: [[2, 3], [4]]\nloads:\n  - name: point-mass\n    tokens: 1\nalgorithms: [threshold-1]\nzip: [[network.sides, loads.tokens]]\n")
	reg := registry.New()
	f.Fuzz(func(t *testing.T, text string) {
		fl, err := Parse("f.yaml", []byte(text), reg, true)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tokendist: f.yaml") {
				t.Errorf("error without the file name: %v", err)
			}
			return
		}
		if _, err := fl.Specs(); err != nil {
			t.Errorf("Parse accepted a file whose Specs fail: %v", err)
		}
	})
}

const dynamicFile = `name: dynamic
networks:
  - name: path
    n: 16
loads:
  - name: constant
    per_node: 4
algorithms: [threshold-1]
stop:
  max_steps: 400
workload: [{name: poisson, rate: 0.05}, {name: service, mu: 0.1}]
churn: {name: random-churn, fail: 0.01, recover: 0.2}
steady: {warm_up: 100}
`

// TestFileSteadyBounds: steady.warm_up and steady.every take any non-negative integer,
// 0 included, and a YAML alias to a scalar reads as the scalar.
func TestFileSteadyBounds(t *testing.T) {
	base := "networks:\n  - name: path\n    n: &n 8\nloads:\n  - name: point-mass\n    tokens: 10\nalgorithms: [threshold-1]\n"
	for _, tc := range []struct {
		text          string
		warmUp, every int64
	}{
		{"steady:\n  warm_up: 0\n  every: 2\n", 0, 2},
		{"steady:\n  warm_up: *n\n  every: 3\n", 8, 3},
	} {
		f, err := parse(t, base+tc.text, false)
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		runs, err := f.Specs()
		if err != nil {
			t.Fatal(err)
		}
		if st := runs[0].Spec.Steady; st == nil || st.WarmUp != tc.warmUp || st.Every != tc.every {
			t.Fatalf("%q: steady %+v, want warm_up %d, every %d", tc.text, st, tc.warmUp, tc.every)
		}
	}
}

func TestDynamicFile(t *testing.T) {
	f, err := parse(t, dynamicFile, false)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Specs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	s := runs[0].Spec
	if len(s.Workload) != 2 || s.Churn == nil || s.Steady == nil || s.Steady.WarmUp != 100 || s.Workload[0].Params["per_node"] != true {
		t.Fatalf("spec %+v", s)
	}
	out, err := registry.New().Run(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result
	if res.Arrived == 0 || res.Completed == 0 || res.Steady == nil || out.Metrics["completed"] != float64(res.Completed) {
		t.Fatalf("result %v, steady %v, metrics %v", res, res.Steady, out.Metrics)
	}
	if got, want := res.Loads.Total(), res.Initial+res.Arrived-res.Completed; got != want {
		t.Errorf("total %d, want initial %d + arrived %d − completed %d", got, res.Initial, res.Arrived, res.Completed)
	}
	// The new keys are part of the run key; a file without them keeps its old key.
	static, err := parse(t, strings.Split(dynamicFile, "workload:")[0], false)
	if err != nil {
		t.Fatal(err)
	}
	sr, _ := static.Specs()
	if sr[0].Key == runs[0].Key {
		t.Error("workload does not change the run key")
	}
	js, _ := json.Marshal(sr[0].Spec)
	for _, k := range []string{"workload", "churn", "steady"} {
		if strings.Contains(string(js), k) {
			t.Errorf("static spec JSON mentions %s: %s", k, js)
		}
	}
}

const asyncFile = `
networks: {name: ring, n: 8}
loads: {name: random-range, lo: 0, hi: 20}
algorithms: threshold-1
stop: {max_steps: 5}
network_model:
  delay: {kind: uniform, min: 0.5, max: 2}
  loss: 0.1
  crashes:
    - {node: 2, at: 1.5, down_for: 3, point: before-persist}
  crash_rate: 0.01
  down_time: {kind: exponential, mean: 2}
  patience: 3
`

func TestNetworkModelBlock(t *testing.T) {
	f, err := parse(t, asyncFile, false)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Specs()
	if err != nil {
		t.Fatal(err)
	}
	m := runs[0].Spec.NetworkModel
	if m == nil || m.Loss != 0.1 || m.Delay.Kind != faults.DelayUniform || m.Delay.Max != 2 || m.Patience != 3 ||
		len(m.Crashes) != 1 || m.Crashes[0].Point != faults.CrashBeforePersist || m.DownTime.Mean != 2 {
		t.Fatalf("network model %+v", m)
	}
	plain, err := parse(t, asyncFile[:strings.Index(asyncFile, "network_model:")], false)
	if err != nil {
		t.Fatal(err)
	}
	prs, _ := plain.Specs()
	if prs[0].Key == runs[0].Key {
		t.Fatal("the network model does not change the run's key")
	}
	for _, bad := range []string{
		"network_model: {loss: 2}",
		"network_model: {losss: 0.1}",
		"network_model: {delay: {kind: gamma}}",
		"network_model: {crashes: [{node: 1, point: later}]}",
		"network_model: {loss: high}",
		"network_model: 3",
		"network_model: {patience: -1}",
	} {
		text := asyncFile[:strings.Index(asyncFile, "network_model:")] + bad + "\n"
		_, err := parse(t, text, false)
		var fe *FileError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Key, "network_model") || !strings.HasPrefix(err.Error(), "tokendist: ") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestNetworkModelAxes: a list of models, and lists inside a model, are grid axes (the
// cartesian product, keys in sorted order); crashes stays one list; seeds multiply.
func TestNetworkModelAxes(t *testing.T) {
	head := asyncFile[:strings.Index(asyncFile, "network_model:")] + "seeds: 2\n"
	f, err := parse(t, head+`network_model:
  - {delay: {kind: uniform, min: 1, max: [1, 2, 4]}, loss: [0, 0.1], crashes: [{node: 1, at: 2, down_for: 1}, {node: 2, at: 3, down_for: 1}]}
  - {patience: [0, 5]}
`, false)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := f.Specs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != (3*2+2)*2 {
		t.Fatalf("%d runs; want (3·2 + 2)·2 = 16", len(runs))
	}
	type point struct {
		max, loss float64
		patience  int64
		crashes   int
	}
	var got []point
	keys := map[string]bool{}
	for _, r := range runs {
		m := r.Spec.NetworkModel
		if r.Spec.Seed != runs[0].Spec.Seed+uint64(r.Index%2) {
			t.Fatalf("run %d seed %d", r.Index, r.Spec.Seed)
		}
		keys[r.Key] = true
		if r.Index%2 == 0 {
			got = append(got, point{m.Delay.Max, m.Loss, m.Patience, len(m.Crashes)})
		}
	}
	// keys sorted (crashes, delay, loss), the last varying fastest, like an odometer
	want := []point{{1, 0, 0, 2}, {1, 0.1, 0, 2}, {2, 0, 0, 2}, {2, 0.1, 0, 2}, {4, 0, 0, 2}, {4, 0.1, 0, 2}, {0, 0, 0, 0}, {0, 0, 5, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("models %v\nwant   %v", got, want)
	}
	if len(keys) != len(runs) {
		t.Fatalf("%d distinct keys for %d runs", len(keys), len(runs))
	}
	for _, bad := range []string{"network_model: []", "network_model: [3]", "network_model: {loss: [0, 2]}",
		"network_model: {loss: [" + strings.Repeat("0.1, ", 4100) + "0.2]}"} {
		_, err := parse(t, head+bad+"\n", false)
		var fe *FileError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Key, "network_model") {
			t.Errorf("%.60s: %v", bad, err)
		}
	}
}
