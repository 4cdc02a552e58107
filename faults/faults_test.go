package faults

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
)

func TestDelaySample(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		d        Delay
		mean, lo float64
	}{
		{Delay{}, 1, 1},
		{Constant(2.5), 2.5, 2.5},
		{Uniform(1, 3), 2, 1},
		{Exponential(0.5, 2), 2.5, 0.5},
		{Pareto(1, 3), 1.5, 1}, // mean α·min/(α−1)
	} {
		d := c.d
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		var sum float64
		const k = 200000
		for range k {
			x := d.Sample(r)
			if x < c.lo {
				t.Fatalf("%v drew %v < %v", d, x, c.lo)
			}
			sum += x
		}
		if m := sum / k; math.Abs(m-c.mean) > 0.03*c.mean {
			t.Errorf("%v: mean %v, want %v", d, m, c.mean)
		}
	}
	for _, d := range []Delay{Uniform(-1, 1), Uniform(0, 0), {Kind: 9}, Exponential(math.NaN(), 1)} {
		if d.Validate() == nil {
			t.Errorf("%v accepted", d)
		}
	}
}

func TestNames(t *testing.T) {
	for want, got := range map[string]string{
		"constant(1)":                Delay{}.String(),
		"uniform(1, 2)":              Uniform(1, 2).String(),
		"exponential(min 0, mean 1)": Exponential(0, 0).String(),
		"pareto(min 1, alpha 1.5)":   Pareto(0, 0).String(),
		"DelayKind(9)":               DelayKind(9).String(),
		"before-persist":             CrashBeforePersist.String(),
		"CrashPoint(7)":              CrashPoint(7).String(),
		"exponential":                DelayExponential.String(),
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestModelJSON(t *testing.T) {
	m := Model{Delay: Pareto(0.5, 1.2), Loss: 0.1, Crashes: []Crash{{Node: 2, At: 3, DownFor: 4, Point: CrashBeforeSend}},
		DownTime: Exponential(0, 2), LinkDelay: func(int, int) Delay { return Delay{} }}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"delay":{"kind":"pareto","min":0.5,"alpha":1.2},"loss":0.1,"crashes":[{"node":2,"at":3,"down_for":4,"point":"before-send"}],"down_time":{"kind":"exponential","mean":2}}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	var back Model
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	m.LinkDelay = nil
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip: %+v", back)
	}
	for _, bad := range []string{`{"delay":{"kind":"gamma"}}`, `{"crashes":[{"point":"later"}]}`} {
		if err := json.Unmarshal([]byte(bad), &back); !errors.Is(err, tokendist.ErrBadParameter) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestMinInterval: every time interval of a Model below MinInterval (1e-300, which
// would make a run that never reaches its MaxTime) is refused with an error naming the
// field and the value; small sane values, and MinInterval itself, are accepted.
func TestMinInterval(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(m *Model, x float64)
		tiny float64 // the refused value (1e-300, or what makes the interval 1e-300)
	}{
		{"Delay", func(m *Model, x float64) { m.Delay = Constant(x) }, 1e-300},
		{"Delay", func(m *Model, x float64) { m.Delay = Uniform(0, x) }, 1e-300},
		{"Delay", func(m *Model, x float64) { m.Delay = Exponential(0, x) }, 1e-300},
		{"Delay", func(m *Model, x float64) { m.Delay = Pareto(x, 2) }, 1e-300},
		{"DownTime", func(m *Model, x float64) { m.DownTime = Constant(x) }, 1e-300},
		{"ReorderDelay", func(m *Model, x float64) { m.ReorderDelay = x }, 1e-300},
		{"TickInterval[1]", func(m *Model, x float64) { m.TickInterval = []float64{1, x} }, 1e-300},
		{"CrashRate", func(m *Model, x float64) { m.CrashRate = 1 / x }, 1e-300},
		{"Drift", func(m *Model, x float64) { m.Drift = 1 - x }, 1e-9},
	} {
		var m Model
		c.set(&m, c.tiny)
		err := m.Validate(2)
		if !errors.Is(err, tokendist.ErrBadParameter) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s at %v: %v", c.name, c.tiny, err)
		}
		for _, x := range []float64{MinInterval, 1e-3, 0.5} {
			m = Model{}
			c.set(&m, x)
			if err := m.Validate(2); err != nil {
				t.Errorf("%s at %v: %v", c.name, x, err)
			}
		}
	}
	if err := Constant(1e-300).Validate(); err == nil || !strings.Contains(err.Error(), "1e-300") {
		t.Errorf("Delay.Validate: %v", err)
	}
	// Drift shortens every tick interval: 1.5e-6 with Drift 0.5 is 7.5e-7.
	m := Model{TickInterval: []float64{1.5e-6}, Drift: 0.5}
	if err := m.Validate(1); err == nil || !strings.Contains(err.Error(), "TickInterval[0] = 1.5e-06: with Drift 0.5 the tick interval 7.5e-07") {
		t.Errorf("drifted tick interval: %v", err)
	}
	m = Model{CrashRate: 2e6}
	if err := m.Validate(1); err == nil || !strings.Contains(err.Error(), "CrashRate 2e+06 (want 0 ≤ CrashRate ≤ 1/MinInterval = 1e+06)") {
		t.Errorf("crash rate: %v", err)
	}
}
