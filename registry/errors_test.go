package registry

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
)

// TestErrorPrefix walks the registry's error paths (unknown names, bad parameter types,
// bad values, bad specs, bad registrations, options the Spec owns) and checks that every
// message starts with "tokendist: ", has it exactly once, and that errors.Is finds the
// sentinel the error wraps.
func TestErrorPrefix(t *testing.T) {
	reg := New()
	ctx := context.Background()
	base := func() Spec {
		return Spec{Network: ch("path", "n", 4), Loads: ch("point-mass", "tokens", 5), Algorithm: ch("threshold-1")}
	}
	run := func(mod func(s *Spec)) error {
		s := base()
		mod(&s)
		_, err := reg.Run(ctx, s, nil)
		return err
	}
	runOpts := func(o *tokendist.RunOptions) error {
		_, err := reg.Run(ctx, base(), o)
		return err
	}
	missing := filepath.Join(t.TempDir(), "missing.txt")
	noGraph := func(Params, uint64) (*tokendist.Graph, error) { return nil, nil }
	second := func(_ any, err error) error { return err }
	cases := []struct {
		name string
		err  error
		want []error
		has  string // a substring the message must hold (names the value)
	}{
		{"unknown network", run(func(s *Spec) { s.Network.Name = "pth" }), []error{ErrUnknownName, tokendist.ErrBadParameter}, `"pth"`},
		{"unknown loads", run(func(s *Spec) { s.Loads.Name = "lumpy" }), []error{ErrUnknownName}, `"lumpy"`},
		{"unknown algorithm", run(func(s *Spec) { s.Algorithm.Name = "magic" }), []error{ErrUnknownName}, `"magic"`},
		{"unknown metric", run(func(s *Spec) { s.Metrics = []string{"nope"} }), []error{ErrUnknownName}, `"nope"`},
		{"unknown workload", run(func(s *Spec) { s.Workload = []Choice{{Name: "flood"}} }), []error{ErrUnknownName}, `"flood"`},
		{"unknown churn", run(func(s *Spec) { s.Churn = &Choice{Name: "quake"} }), []error{ErrUnknownName}, `"quake"`},
		{"Lookup", second(reg.Lookup(KindAlgorithm, "x")), []error{ErrUnknownName}, `"x"`},
		{"Constructor", second(reg.Constructor(KindNetwork, "y")), []error{ErrUnknownName}, `"y"`},
		{"bad parameter type", run(func(s *Spec) { s.Network.Params["n"] = "four" }), []error{tokendist.ErrBadParameter}, `"four"`},
		{"bad list type", run(func(s *Spec) { s.Workload = []Choice{ch("hotspot", "rate", 1.0, "nodes", []any{"a"})} }), []error{tokendist.ErrBadParameter}, "nodes"},
		{"bad allowed value", run(func(s *Spec) { s.Algorithm.Params = Params{"coloring": "vizing"} }), nil, "vizing"},
		{"unknown parameter", run(func(s *Spec) { s.Network.Params["m"] = 3 }), []error{tokendist.ErrBadParameter}, `"m"`},
		{"missing parameter", run(func(s *Spec) { delete(s.Network.Params, "n") }), []error{tokendist.ErrBadParameter}, "parameter n"},
		{"bad value (constructor)", run(func(s *Spec) { s.Network.Params["n"] = -1 }), []error{tokendist.ErrBadParameter}, "-1"},
		{"bad loads value", run(func(s *Spec) { s.Loads = ch("explicit", "values", []any{1, 2}) }), []error{tokendist.ErrBadLoads}, "2 values"},
		{"bad workload value", run(func(s *Spec) { s.Workload = []Choice{ch("adversary", "rate", -1.0)} }), []error{tokendist.ErrBadParameter}, "-1"},
		{"missing trace file", run(func(s *Spec) { s.Workload = []Choice{ch("trace", "file", missing)} }), []error{tokendist.ErrBadParameter, fs.ErrNotExist}, missing},
		{"missing edge list", run(func(s *Spec) { s.Network = ch("edge-list", "file", missing) }), []error{fs.ErrNotExist}, missing},
		{"missing DOT file", run(func(s *Spec) { s.Network = ch("dot", "file", missing) }), []error{fs.ErrNotExist}, missing},
		{"bad spec: negative max_steps", run(func(s *Spec) { s.Stop.MaxSteps = -3 }), []error{tokendist.ErrBadParameter}, "-3"},
		{"bad spec: negative sample_every", run(func(s *Spec) { s.SampleEvery = -4 }), []error{tokendist.ErrBadParameter}, "-4"},
		{"bad spec: negative steady", run(func(s *Spec) { s.Steady = &tokendist.SteadyOptions{WarmUp: -5} }), []error{tokendist.ErrBadParameter}, "-5"},
		{"options: Seed", runOpts(&tokendist.RunOptions{Seed: 7}), []error{tokendist.ErrBadParameter}, "RunOptions.Seed = 7"},
		{"options: MaxSteps", runOpts(&tokendist.RunOptions{MaxSteps: 9}), []error{tokendist.ErrBadParameter}, "Spec.Stop.MaxSteps"},
		{"options: TargetDiscrepancy", runOpts(&tokendist.RunOptions{TargetDiscrepancy: 2}), []error{tokendist.ErrBadParameter}, "Spec.Stop.TargetDiscrepancy"},
		{"options: Steady", runOpts(&tokendist.RunOptions{Steady: &tokendist.SteadyOptions{}}), []error{tokendist.ErrBadParameter}, "RunOptions.Steady"},
		{"register: empty name", reg.RegisterNetwork(Entry{}, noGraph), []error{tokendist.ErrBadParameter}, "empty name"},
		{"register: bad default", reg.RegisterNetwork(Entry{Name: "bad", Params: []Param{{Name: "x", Type: ParamInt, Default: "s"}}}, noGraph), []error{tokendist.ErrBadParameter}, `"s"`},
		{"register: nil func", reg.RegisterAlgorithm(Entry{Name: "nil"}, nil), []error{tokendist.ErrBadParameter}, "nil"},
		{"Params.Int", second(Params{"k": "x"}.Int("k")), []error{tokendist.ErrBadParameter}, `"x"`},
		{"Params missing", second(Params{}.Str("k")), []error{tokendist.ErrBadParameter}, "k"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("no error")
			}
			msg := c.err.Error()
			if !strings.HasPrefix(msg, "tokendist: ") || strings.Count(msg, "tokendist: ") != 1 {
				t.Errorf("message %q: want the prefix %q first and exactly once", msg, "tokendist: ")
			}
			if !strings.Contains(msg, c.has) {
				t.Errorf("message %q does not name %q", msg, c.has)
			}
			want := c.want
			if want == nil {
				want = []error{tokendist.ErrBadParameter}
			}
			for _, w := range want {
				if !errors.Is(c.err, w) {
					t.Errorf("%q: errors.Is(err, %v) is false", msg, w)
				}
			}
		})
	}
}

// TestRunOptionsRead checks that Run reads Workers and Recorder from its options: the
// recorder sees every sample of the run, and the result does not depend on Workers.
func TestRunOptionsRead(t *testing.T) {
	reg := New()
	s := Spec{Network: ch("ring", "n", 16), Loads: ch("point-mass", "tokens", 64), Algorithm: ch("randomized-diffusion"),
		Stop: StopRule{MaxSteps: 20}, SampleEvery: 5, Seed: 3}
	var seen int
	rec := tokendist.RecorderFunc(func(*tokendist.State, tokendist.Sample) error { seen++; return nil })
	a, err := reg.Run(context.Background(), s, &tokendist.RunOptions{Workers: 2, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 || seen != len(a.Result.Trace) {
		t.Errorf("recorder saw %d samples, the trace has %d", seen, len(a.Result.Trace))
	}
	b, err := reg.Run(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Result.Loads, b.Result.Loads) || a.Result.Steps != b.Result.Steps {
		t.Errorf("Workers 2 and nil options differ: %v vs %v", a.Result, b.Result)
	}
}
