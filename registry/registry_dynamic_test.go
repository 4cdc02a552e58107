package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
