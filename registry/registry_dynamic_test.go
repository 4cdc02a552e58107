package registry

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
)

func TestRegistryWorkloadsAndChurn(t *testing.T) {
	reg := New()
	trace := filepath.Join(t.TempDir(), "trace.csv")
	if err := os.WriteFile(trace, []byte("step,node,count\n1,0,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		kind   Kind
		name   string
		params map[string]any
		bad    string // substring of the error naming the key; "" for success
	}{
		{KindWorkload, "poisson", map[string]any{"rate": 0.1}, ""},
		{KindWorkload, "poisson", map[string]any{"rate": 0.1, "per_node": false}, ""},
		{KindWorkload, "poisson", nil, "rate"},
		{KindWorkload, "poisson", map[string]any{"rate": "fast"}, "rate"},
		{KindWorkload, "poisson", map[string]any{"rate": 0.1, "lambda": 1}, "lambda"},
		{KindWorkload, "poisson", map[string]any{"rate": -1.0}, "rate"},
		{KindWorkload, "hotspot", map[string]any{"rate": 1.0, "nodes": []any{0, 3}}, ""},
		{KindWorkload, "hotspot", map[string]any{"rate": 1.0, "nodes": "x"}, "nodes"},
		{KindWorkload, "adversary", map[string]any{"rate": 2}, ""},
		{KindWorkload, "adversary", map[string]any{}, "rate"},
		{KindWorkload, "service", map[string]any{"mu": 0.5}, ""},
		{KindWorkload, "service", map[string]any{"mu": -2.0}, "rate"},
		{KindWorkload, "service", map[string]any{"rate": 0.5}, "rate"},
		{KindWorkload, "trace", map[string]any{"file": trace}, ""},
		{KindWorkload, "trace", map[string]any{"file": filepath.Join(t.TempDir(), "none.csv")}, "file"},
		{KindChurn, "random-churn", map[string]any{"fail": 0.01, "recover": 0.1}, ""},
		{KindChurn, "random-churn", map[string]any{"fail": 0.01}, "recover"},
		{KindChurn, "random-churn", map[string]any{"fail": 1.5, "recover": 0.1}, "fail"},
	}
	for _, tc := range cases {
		s := Spec{Network: Choice{Name: "ring", Params: Params{"n": 8}}, Loads: Choice{Name: "constant", Params: Params{"per_node": 2}},
			Algorithm: Choice{Name: "threshold-1"}}
		c := Choice{Name: tc.name, Params: tc.params}
		if tc.kind == KindWorkload {
			s.Workload = []Choice{c}
		} else {
			s.Churn = &c
		}
		cs, err := reg.Canonical(s)
		if err == nil {
			_, _, err = reg.BuildDynamic(cs)
		}
		if tc.bad == "" {
			if err != nil {
				t.Errorf("%s %v: %v", tc.name, tc.params, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, tokendist.ErrBadParameter) || !strings.Contains(err.Error(), "tokendist: ") || !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("%s %v: error %v, want a tokendist: error naming %s", tc.name, tc.params, err, tc.bad)
		}
	}
	if _, err := reg.Canonical(Spec{Network: Choice{Name: "ring", Params: Params{"n": 8}}, Loads: Choice{Name: "constant", Params: Params{"per_node": 2}},
		Algorithm: Choice{Name: "threshold-1"}, Workload: []Choice{{Name: "nope"}}}); !errors.Is(err, ErrUnknownName) {
		t.Errorf("unknown workload: %v", err)
	}
}

func TestRegistryWorkloadRun(t *testing.T) {
	reg := New()
	s := Spec{Network: Choice{Name: "path", Params: Params{"n": 16}}, Loads: Choice{Name: "constant", Params: Params{"per_node": 4}},
		Algorithm: Choice{Name: "threshold-1"}, Stop: StopRule{MaxSteps: 400}, Seed: 3,
		Workload: []Choice{{Name: "poisson", Params: Params{"rate": 0.05}}, {Name: "service", Params: Params{"mu": 0.1}}},
		Churn:    &Choice{Name: "random-churn", Params: Params{"fail": 0.01, "recover": 0.2}},
		Steady:   &tokendist.SteadyOptions{WarmUp: 100}}
	out, err := reg.Run(context.Background(), s, &tokendist.RunOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result
	if res.Arrived == 0 || res.Completed == 0 || res.Steady == nil {
		t.Fatalf("arrived %d completed %d steady %v", res.Arrived, res.Completed, res.Steady)
	}
	if got, want := res.Loads.Total(), res.Initial+res.Arrived-res.Completed; got != want {
		t.Errorf("total %d, want %d", got, want)
	}
	if out.Metrics["arrived"] != float64(res.Arrived) || out.Metrics["steady_samples"] == 0 {
		t.Errorf("metrics %v", out.Metrics)
	}
	again, err := reg.Run(context.Background(), s, &tokendist.RunOptions{Workers: 1})
	if err != nil || again.Result.Arrived != res.Arrived || again.Result.Moved != res.Moved {
		t.Errorf("not reproducible: %v %v", again.Result, err)
	}
}

// canonicalJSON returns the JSON of s's canonical form.
func canonicalJSON(t *testing.T, reg *Registry, s Spec) string {
	t.Helper()
	c, err := reg.Canonical(s)
	if err != nil {
		t.Fatalf("Canonical(%+v): %v", s, err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCanonicalEquivalentSpecs: specs that describe the same run have the same canonical
// JSON (the run's key hashes it): workload and churn parameters spelled as int or float
// or left at their defaults, an empty workload list or metric list against none, the
// steady-state interval 0 against its meaning 1, metrics in any order and repeated. Specs
// that describe different runs differ, and Canonical leaves its argument alone.
func TestCanonicalEquivalentSpecs(t *testing.T) {
	reg := New()
	base := Spec{Network: ch("ring", "n", 12), Loads: ch("point-mass", "tokens", 50), Algorithm: ch("rsw-diffusion"), Seed: 3}
	with := func(f func(*Spec)) Spec {
		s := base
		f(&s)
		return s
	}
	same := [][2]Spec{
		{with(func(s *Spec) { s.Workload = []Choice{} }), base},
		{with(func(s *Spec) { s.Metrics = []string{} }), base},
		{with(func(s *Spec) { s.Workload = []Choice{ch("poisson", "rate", 0.25)} }),
			with(func(s *Spec) { s.Workload = []Choice{ch("poisson", "rate", 0.25, "per_node", true)} })},
		{with(func(s *Spec) { s.Workload = []Choice{ch("poisson", "rate", 1), ch("service", "mu", 2)} }),
			with(func(s *Spec) { s.Workload = []Choice{ch("poisson", "rate", 1.0), ch("service", "mu", int64(2))} })},
		{with(func(s *Spec) { c := ch("random-churn", "fail", 0.1, "recover", 1); s.Churn = &c }),
			with(func(s *Spec) { c := ch("random-churn", "recover", 1.0, "fail", 0.1); s.Churn = &c })},
		{with(func(s *Spec) { s.Steady = &tokendist.SteadyOptions{WarmUp: 5} }),
			with(func(s *Spec) { s.Steady = &tokendist.SteadyOptions{WarmUp: 5, Every: 1} })},
		{with(func(s *Spec) { s.Metrics = []string{"lambda_max", "lambda_max"} }),
			with(func(s *Spec) { s.Metrics = []string{"lambda_max"} })},
		{with(func(s *Spec) { s.Metrics = []string{"optimal_moves", "lambda_max", "lambda_max", "log2_n"} }),
			with(func(s *Spec) { s.Metrics = []string{"log2_n", "lambda_max", "optimal_moves"} })},
		{with(func(s *Spec) {
			c := ch("random-churn", "fail", 0.1, "recover", 1)
			s.Churn, s.Metrics, s.Steady = &c, []string{"optimal_moves", "lambda_max"}, &tokendist.SteadyOptions{}
		}), with(func(s *Spec) {
			c := ch("random-churn", "fail", 0.1, "recover", 1)
			s.Churn, s.Metrics, s.Steady = &c, []string{"lambda_max", "optimal_moves"}, &tokendist.SteadyOptions{Every: 1}
		})},
	}
	for i, p := range same {
		a, b := canonicalJSON(t, reg, p[0]), canonicalJSON(t, reg, p[1])
		if a != b {
			t.Errorf("pair %d: equivalent specs differ:\n%s\n%s", i, a, b)
		}
	}
	different := []Spec{
		base,
		with(func(s *Spec) { s.Seed = 4 }),
		with(func(s *Spec) { s.Workload = []Choice{ch("poisson", "rate", 0.25)} }),
		with(func(s *Spec) { s.Workload = []Choice{ch("poisson", "rate", 0.25, "per_node", false)} }),
		with(func(s *Spec) { s.Workload = []Choice{ch("service", "mu", 2), ch("poisson", "rate", 1)} }),
		with(func(s *Spec) { s.Workload = []Choice{ch("poisson", "rate", 1), ch("service", "mu", 2)} }),
		with(func(s *Spec) { s.Steady = &tokendist.SteadyOptions{} }),
		with(func(s *Spec) { s.Steady = &tokendist.SteadyOptions{Every: 2} }),
		with(func(s *Spec) { c := ch("random-churn", "fail", 0.1, "recover", 1); s.Churn = &c }),
		with(func(s *Spec) { s.Metrics = []string{"lambda_max"} }),
	}
	seen := map[string]int{}
	for i, s := range different {
		j := canonicalJSON(t, reg, s)
		if k, ok := seen[j]; ok {
			t.Errorf("specs %d and %d describe different runs but have the same canonical form %s", k, i, j)
		}
		seen[j] = i
	}
	for _, st := range []tokendist.SteadyOptions{{WarmUp: -1}, {Every: -1}, {WarmUp: -1, Every: -1}} {
		if _, err := reg.Canonical(with(func(s *Spec) { s.Steady = &st })); !errors.Is(err, tokendist.ErrBadParameter) || !strings.Contains(err.Error(), "-1") {
			t.Errorf("steady %+v: %v, want a bad parameter naming -1", st, err)
		}
	}
	in := with(func(s *Spec) {
		s.Steady = &tokendist.SteadyOptions{WarmUp: 2}
		s.Metrics = []string{"lambda_max", "lambda_max"}
		s.Workload = []Choice{ch("poisson", "rate", 1)}
	})
	if _, err := reg.Canonical(in); err != nil {
		t.Fatal(err)
	}
	if in.Steady.Every != 0 || len(in.Metrics) != 2 || len(in.Workload[0].Params) != 1 {
		t.Errorf("Canonical changed its argument: steady %+v, metrics %v, workload %v", *in.Steady, in.Metrics, in.Workload)
	}
}

// TestRunTauAndMaxSteps: Stop.Tau sets the budget to τ(G, K), computed here from
// LambdaMax and BalancingTime with K the initial discrepancy (at least 1); with
// Stop.MaxSteps as well the smaller of the two applies; MaxSteps alone is the budget.
func TestRunTauAndMaxSteps(t *testing.T) {
	reg := New()
	g, _ := tokendist.Ring(16)
	sp, err := tokendist.LambdaMax(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	tau := func(k int64) int64 {
		v, err := tokendist.BalancingTime(sp.LambdaMax, 16, k)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	t400, t1 := tau(400), tau(1)
	if t400 <= 10 || t1 >= t400 {
		t.Fatalf("τ(K = 400) = %d, τ(K = 1) = %d: the cases below need 10 < τ(1) < τ(400)", t400, t1)
	}
	for _, tc := range []struct {
		loads Choice
		stop  StopRule
		want  int64
	}{
		{ch("point-mass", "tokens", 400), StopRule{Tau: true}, t400},
		{ch("point-mass", "tokens", 400), StopRule{Tau: true, MaxSteps: 10}, 10},
		{ch("point-mass", "tokens", 400), StopRule{Tau: true, MaxSteps: t400 - 1}, t400 - 1},
		{ch("point-mass", "tokens", 400), StopRule{Tau: true, MaxSteps: t400 + 1}, t400},
		{ch("point-mass", "tokens", 400), StopRule{MaxSteps: 10}, 10},
		{ch("point-mass", "tokens", 400), StopRule{}, 0},
		{ch("constant", "per_node", 3), StopRule{Tau: true}, t1}, // K = 0 counts as 1
	} {
		s := Spec{Network: ch("ring", "n", 16), Loads: tc.loads, Algorithm: ch("rsw-diffusion"), Stop: tc.stop}
		if tc.stop.MaxSteps == 0 && !tc.stop.Tau { // no explicit budget (0): stop at once
			s.Stop.UseTarget, s.Stop.TargetDiscrepancy = true, 1000
		}
		out, err := reg.Run(context.Background(), s, &tokendist.RunOptions{Workers: 1})
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		if out.MaxSteps != tc.want {
			t.Errorf("loads %v stop %+v: MaxSteps %d, want %d", tc.loads, tc.stop, out.MaxSteps, tc.want)
		}
		if tc.want > 0 && out.Result.Steps > tc.want {
			t.Errorf("loads %v stop %+v: ran %d steps, budget %d", tc.loads, tc.stop, out.Result.Steps, tc.want)
		}
	}
}

// TestRunWorkloadStreams: a spec with one workload runs it as constructed directly, on
// its own default random stream; a spec with several combines them as
// NewCombinedWorkload does (each on its own stream). The direct runs here build the same
// network, loads and balancer with Build and compare every count and load.
func TestRunWorkloadStreams(t *testing.T) {
	reg := New()
	for _, ws := range [][]Choice{
		{ch("poisson", "rate", 0.3)},
		{ch("service", "mu", 0.7)},
		{ch("poisson", "rate", 0.3), ch("service", "mu", 0.4)},
	} {
		s := Spec{Network: ch("ring", "n", 30), Loads: ch("point-mass", "tokens", 300), Algorithm: ch("random-matching"),
			Stop: StopRule{MaxSteps: 60}, Seed: 11, Workload: ws}
		out, err := reg.Run(context.Background(), s, &tokendist.RunOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := reg.Canonical(s)
		if err != nil {
			t.Fatal(err)
		}
		g, l, b, err := reg.Build(cs)
		if err != nil {
			t.Fatal(err)
		}
		var parts []tokendist.Workload
		for _, c := range ws {
			var w tokendist.Workload
			switch c.Name {
			case "poisson":
				w, err = tokendist.NewPoissonArrivals(c.Params["rate"].(float64), true)
			case "service":
				w, err = tokendist.NewService(c.Params["mu"].(float64))
			}
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, w)
		}
		w := parts[0]
		if len(parts) > 1 {
			if w, err = tokendist.NewCombinedWorkload(parts...); err != nil {
				t.Fatal(err)
			}
		}
		direct, err := tokendist.Run(context.Background(), g, l, b, &tokendist.RunOptions{MaxSteps: 60, Seed: 11, Workers: 1, Workload: w})
		if err != nil {
			t.Fatal(err)
		}
		got := out.Result
		if got.Arrived != direct.Arrived || got.Completed != direct.Completed || got.Moved != direct.Moved || !slices.Equal(got.Loads, direct.Loads) {
			t.Errorf("workloads %v: registry run arrived %d completed %d moved %d, direct run %d %d %d", ws, got.Arrived, got.Completed, got.Moved,
				direct.Arrived, direct.Completed, direct.Moved)
		}
		if got.Arrived+got.Completed == 0 {
			t.Errorf("workloads %v: nothing arrived or completed", ws)
		}
	}
}

// TestRunDynamicMetrics: Registry.Run reports the dynamic counts (arrived, completed,
// initial) for a run with a workload, churn or steady-state measurement, and the
// steady-state metrics with the latter; a static run without metrics has none (nil); a
// requested metric that does not apply is left out without hiding the ones after it.
func TestRunDynamicMetrics(t *testing.T) {
	reg := New()
	base := Spec{Network: ch("ring", "n", 8), Loads: ch("point-mass", "tokens", 40), Algorithm: ch("rsw-diffusion"), Stop: StopRule{MaxSteps: 20}}
	run := func(f func(*Spec)) map[string]float64 {
		t.Helper()
		s := base
		f(&s)
		out, err := reg.Run(context.Background(), s, &tokendist.RunOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return out.Metrics
	}
	if m := run(func(*Spec) {}); m != nil {
		t.Errorf("static run: metrics %v, want none", m)
	}
	if m := run(func(s *Spec) { s.Steady = &tokendist.SteadyOptions{WarmUp: 10} }); m["steady_samples"] != 10 || m["initial"] != 40 {
		t.Errorf("steady only: metrics %v", m)
	}
	if m := run(func(s *Spec) { c := ch("random-churn", "fail", 0.1, "recover", 0.5); s.Churn = &c }); len(m) != 3 || m["initial"] != 40 {
		t.Errorf("churn only: metrics %v, want arrived, completed and initial", m)
	}
	if m := run(func(s *Spec) { s.Workload = []Choice{ch("poisson", "rate", 1)} }); m["arrived"] == 0 || m["initial"] != 40 {
		t.Errorf("workload only: metrics %v", m)
	}
	if m := run(func(s *Spec) { s.Metrics = []string{"lambda_max", "group_discrepancy"} }); len(m) != 1 || m["lambda_max"] <= 0 {
		t.Errorf("group_discrepancy (not applicable) before lambda_max: metrics %v, want lambda_max only", m)
	}
}
