package registry

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
)

func ch(name string, kv ...any) Choice {
	p := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i].(string)] = kv[i+1]
	}
	return Choice{Name: name, Params: p}
}

// TestRegistryEveryAlgorithm runs every built-in algorithm once on a network it accepts
// and checks conservation and the determinism of the canonical spec.
func TestRegistryEveryAlgorithm(t *testing.T) {
	reg := New()
	tree := ch("kary-tree", "height", 3)
	cube := ch("hypercube", "d", 4)
	rr := ch("random-regular", "n", 32, "d", 4)
	specs := map[string]Spec{
		"threshold-1":             {Network: tree, Loads: ch("point-mass", "tokens", 100), Metrics: []string{"threshold1_bound", "msd"}},
		"threshold-2":             {Network: tree, Loads: ch("random-range", "hi", 20)},
		"discrepancy-1":           {Network: ch("torus", "sides", []any{4, 4}), Loads: ch("random-range", "hi", 20), Algorithm: ch("discrepancy-1", "spanning_tree", true)},
		"hypercube-balance":       {Network: cube, Loads: ch("uniform-random", "tokens", 100), Metrics: []string{"log2_n", "minimum_error"}},
		"dimension-order-balance": {Network: cube, Loads: ch("dimension-order-worst", "m", 8)},
		"leighton-balance":        {Network: ch("shuffle-exchange", "d", 3), Loads: ch("random-range", "hi", 9)},
		"multi-balance":           {Network: cube, Loads: ch("random-range", "hi", 9), Algorithm: ch("multi-balance", "groups", 3), Metrics: []string{"group_discrepancy"}},
		"randomized-diffusion":    {Network: rr, Loads: ch("point-mass", "tokens", 1000), Stop: StopRule{Tau: true}, Metrics: []string{"lambda_max"}},
		"rsw-diffusion":           {Network: rr, Loads: ch("point-mass", "tokens", 1000), Stop: StopRule{MaxSteps: 50}},
		"fgs-deterministic":       {Network: rr, Loads: ch("point-mass", "tokens", 1000), Stop: StopRule{MaxSteps: 50}},
		"fgs-randomized":          {Network: rr, Loads: ch("point-mass", "tokens", 1000), Stop: StopRule{MaxSteps: 50}},
		"random-matching":         {Network: rr, Loads: ch("point-mass", "tokens", 1000), Stop: StopRule{MaxSteps: 50}},
		"perfect-tree":            {Network: ch("random-tree", "n", 20), Loads: ch("random-range", "hi", 9), Algorithm: ch("perfect-tree", "delays", "random"), Metrics: []string{"optimal_moves", "moves_ratio"}},
		"ring":                    {Network: ch("ring", "n", 8), Loads: ch("point-mass", "tokens", 1), Algorithm: ch("ring", "size", 8), Metrics: []string{"ring_speedup", "ring_tasks", "ring_time", "ring_lower_bound", "ring_efficiency"}},
	}
	for _, name := range reg.Names(KindAlgorithm) {
		s, ok := specs[name]
		if !ok {
			t.Errorf("no test spec for algorithm %s", name)
			continue
		}
		if s.Algorithm.Name == "" {
			s.Algorithm = Choice{Name: name}
		}
		s.Seed = 7
		a, err := reg.Run(context.Background(), s, &tokendist.RunOptions{Workers: 1})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if a.Result.Status == tokendist.StatusFailed || a.Result.Status == tokendist.StatusNotStarted {
			t.Errorf("%s: status %v", name, a.Result.Status)
		}
		if name != "ring" && a.Result.Loads.Total() != a.Total {
			t.Errorf("%s: total %d, want %d", name, a.Result.Loads.Total(), a.Total)
		}
		if len(a.Metrics) != len(s.Metrics) {
			t.Errorf("%s: metrics %v, want %v", name, a.Metrics, s.Metrics)
		}
		b, err := reg.Run(context.Background(), a.Spec, &tokendist.RunOptions{Workers: 3})
		if err != nil || !reflect.DeepEqual(a.Result.Loads, b.Result.Loads) || a.Result.Steps != b.Result.Steps {
			t.Errorf("%s: rerun of the canonical spec differs (%v)", name, err)
		}
	}
	na := specs["rsw-diffusion"]
	na.Algorithm, na.Metrics = Choice{Name: "rsw-diffusion"}, []string{"ring_speedup", "optimal_moves", "lambda_max"}
	if r, err := reg.Run(context.Background(), na, &tokendist.RunOptions{Workers: 1}); err != nil || len(r.Metrics) != 1 || r.Metrics["lambda_max"] <= 0 {
		t.Errorf("inapplicable metrics: %v %v, want only lambda_max", r.Metrics, err)
	}
	m := specs["multi-balance"]
	m.Algorithm = ch("multi-balance", "groups", 3)
	if r, _ := reg.Run(context.Background(), m, &tokendist.RunOptions{Workers: 1}); r.Metrics["group_discrepancy"] > 4 {
		t.Errorf("multi-balance group discrepancy %v > log p = 4", r.Metrics["group_discrepancy"])
	}
}

func TestRegistryCanonicalDefaults(t *testing.T) {
	reg := New()
	a, err := reg.Canonical(Spec{Network: ch("kary-tree", "height", 2), Loads: ch("point-mass", "tokens", 5), Algorithm: ch("threshold-1")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := reg.Canonical(Spec{Network: ch("kary-tree", "height", 2.0, "arity", 2), Loads: ch("point-mass", "tokens", int64(5), "node", 0),
		Algorithm: ch("threshold-1", "coloring", "default")})
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("canonical forms differ:\n%s\n%s", ja, jb)
	}
	var back Spec
	if err := json.Unmarshal(ja, &back); err != nil {
		t.Fatal(err)
	}
	c, err := reg.Canonical(back)
	if err != nil {
		t.Fatal(err)
	}
	if jc, _ := json.Marshal(c); string(jc) != string(ja) {
		t.Errorf("JSON round trip changes the canonical form:\n%s\n%s", jc, ja)
	}
}

func TestRegistryErrors(t *testing.T) {
	reg := New()
	base := Spec{Network: ch("path", "n", 4), Loads: ch("point-mass", "tokens", 5), Algorithm: ch("threshold-1")}
	for _, tc := range []struct {
		name string
		mod  func(s *Spec)
		want string
	}{
		{"unknown network", func(s *Spec) { s.Network.Name = "pth" }, `network "pth" (known:`},
		{"unknown param", func(s *Spec) { s.Network.Params["m"] = 3 }, `no parameter "m" (parameters: n)`},
		{"wrong type", func(s *Spec) { s.Network.Params["n"] = "four" }, `parameter n: want int, got "four"`},
		{"bad allowed", func(s *Spec) { s.Algorithm.Params = Params{"coloring": "vizing"} }, "allowed: default, bipartite, misra-gries"},
		{"missing", func(s *Spec) { delete(s.Network.Params, "n") }, "needs parameter n"},
		{"unknown metric", func(s *Spec) { s.Metrics = []string{"nope"} }, `metric "nope"`},
		{"constructor", func(s *Spec) { s.Network.Params["n"] = -1 }, "tokendist: network path: bad parameter: "},
	} {
		s := base
		s.Network = ch("path", "n", 4)
		tc.mod(&s)
		_, err := reg.Run(context.Background(), s, &tokendist.RunOptions{Workers: 1})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	if _, err := reg.Lookup(KindAlgorithm, "x"); !errors.Is(err, ErrUnknownName) {
		t.Errorf("Lookup: %v", err)
	}
	if err := reg.RegisterNetwork(Entry{Name: "bad", Params: []Param{{Name: "x", Type: ParamInt, Default: "s"}}}, func(Params, uint64) (*tokendist.Graph, error) { return nil, nil }); err == nil {
		t.Error("a default of the wrong type was accepted")
	}
}

type halfBalancer struct{}

func (halfBalancer) Step(s *tokendist.State) error {
	l := s.Loads
	for i := 0; i+1 < len(l); i += 2 {
		t := l[i] + l[i+1]
		l[i], l[i+1] = t/2, t-t/2
	}
	return nil
}
func (halfBalancer) String() string { return "half" }

func TestRegistryCustomBalancer(t *testing.T) {
	reg := New()
	err := reg.RegisterAlgorithm(Entry{Name: "half", Doc: "pairs (0,1), (2,3), ... split their tokens"},
		func(*tokendist.Graph, tokendist.Loads, Params) (tokendist.Balancer, error) {
			return halfBalancer{}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	r, err := reg.Run(context.Background(), Spec{Network: ch("path", "n", 4), Loads: ch("explicit", "values", []any{9, 0, 4, 0}),
		Algorithm: Choice{Name: "half"}, Stop: StopRule{MaxSteps: 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (tokendist.Loads{4, 5, 2, 2}); !reflect.DeepEqual(r.Result.Loads, want) {
		t.Errorf("loads %v, want %v", r.Result.Loads, want)
	}
	if _, err := New().Lookup(KindAlgorithm, "half"); err == nil {
		t.Error("a registration leaked into another registry")
	}
}

func TestRegistryFileNetworks(t *testing.T) {
	dir := t.TempDir()
	el := filepath.Join(dir, "g.txt")
	os.WriteFile(el, []byte("# a path\n0 1\n1 2 # comment\n\n2 3\n"), 0o644)
	dt := filepath.Join(dir, "g.dot")
	os.WriteFile(dt, []byte("graph { a -- b; b -- c; c -- d; d -- a }"), 0o644)
	reg := New()
	for _, tc := range []struct {
		c     Choice
		n, m  int
		isErr bool
	}{
		{ch("edge-list", "file", el), 4, 3, false},
		{ch("edge-list", "file", el, "n", 6), 6, 3, false},
		{ch("dot", "file", dt), 4, 4, false},
		{ch("edge-list", "file", filepath.Join(dir, "missing")), 0, 0, true},
		{ch("dot", "file", el), 0, 0, true},
	} {
		e, _ := reg.Lookup(KindNetwork, tc.c.Name)
		p, err := e.Resolve(tc.c.Params)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := reg.Constructor(KindNetwork, tc.c.Name)
		g, err := f.(NetworkFunc)(p, 1)
		if tc.isErr {
			if err == nil {
				t.Errorf("%v: no error", tc.c)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.c, err)
			continue
		}
		if g.Order() != tc.n || g.Size() != tc.m {
			t.Errorf("%v: %d nodes %d edges, want %d %d", tc.c, g.Order(), g.Size(), tc.n, tc.m)
		}
	}
}

// TestLibraryDeps checks that importing the library pulls in no database, YAML or CLI
// package.
func TestLibraryDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v: %s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		l := strings.ToLower(line)
		if strings.Contains(l, "sqlite") || strings.Contains(l, "yaml") || strings.Contains(l, "cobra") || strings.Contains(l, "database/sql") {
			t.Errorf("the library imports %s", line)
		}
	}
}

// TestParamsFloatNonFinite: Params.Float refuses NaN and ±Inf whether they come as
// float64 or float32 (a float32 NaN was accepted, issue 36), naming the parameter, and
// accepts finite values of both widths.
func TestParamsFloatNonFinite(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), math.Inf(-1), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		_, err := Params{"p": v}.Float("p")
		if !errors.Is(err, tokendist.ErrBadParameter) || !strings.Contains(err.Error(), "p") {
			t.Errorf("Float of %v (%T): %v", v, v, err)
		}
	}
	for v, want := range map[any]float64{0.25: 0.25, float32(0.25): 0.25, 3: 3} {
		if f, err := (Params{"p": v}).Float("p"); err != nil || f != want {
			t.Errorf("Float of %v (%T) = %v, %v; want %v", v, v, f, err, want)
		}
	}
}
