package tokendist_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/tokendist/tokendist"
)

// fuzzPrefixed fails unless err is nil or a short "tokendist: " error.
func fuzzPrefixed(t *testing.T, err error) {
	t.Helper()
	if err != nil && (!strings.HasPrefix(err.Error(), "tokendist: ") || len(err.Error()) > 1000) {
		t.Fatalf("error without the prefix or too long (%d bytes): %.200q", len(err.Error()), err.Error())
	}
}

// FuzzTraceCSV reads arbitrary bytes as a trace CSV: either a short prefixed error, or a
// trace that writes back and reads back to itself. It also round-trips traces built
// from the fuzzer's numbers.
func FuzzTraceCSV(f *testing.F) {
	var buf bytes.Buffer
	tr := tokendist.Trace{{Step: 0, Time: 0, Discrepancy: 5, Max: 5, Min: 0, Potential: tokendist.Uint128{Hi: 1, Lo: 2}, Moved: 0, Messages: 0, Negative: 0},
		{Step: 3, Time: math.MaxInt64, Discrepancy: 1, Max: 2, Min: 1, Moved: 9, Messages: 4, Negative: 2}}
	if err := tr.WriteCSV(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes(), int64(1), int64(2), uint64(3))
	f.Add([]byte("step,time\n1,2\n"), int64(-1), int64(math.MinInt64), uint64(math.MaxUint64))
	f.Add([]byte("step,time,discrepancy,max,min,potential,moved,messages,negative\n1,2,3,4,5,-6,7,8,9\n"), int64(0), int64(0), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, a, b int64, p uint64) {
		got, err := tokendist.ReadTraceCSV(bytes.NewReader(data))
		fuzzPrefixed(t, err)
		if err == nil {
			fuzzRoundTrip(t, got)
		}
		fuzzRoundTrip(t, tokendist.Trace{{Step: a, Time: b, Discrepancy: a ^ b, Max: b, Min: a, Potential: tokendist.Uint128{Hi: p, Lo: ^p}, Moved: a, Messages: b, Negative: int(int32(p))}})
	})
}

func fuzzRoundTrip(t *testing.T, tr tokendist.Trace) {
	t.Helper()
	var buf bytes.Buffer
	if err := tr.WriteCSV(&buf); err != nil {
		t.Fatalf("WriteCSV: %v", err)
	}
	back, err := tokendist.ReadTraceCSV(&buf)
	if err != nil {
		t.Fatalf("ReadTraceCSV of WriteCSV output: %v", err)
	}
	if len(back) != len(tr) || (len(tr) > 0 && !reflect.DeepEqual(back, tr)) {
		t.Fatalf("round trip: %v, want %v", back, tr)
	}
}

// FuzzTextDecoders feeds arbitrary text to Status.UnmarshalText and ParseTreeNode:
// either a short prefixed error or a value that encodes back to the input.
func FuzzTextDecoders(f *testing.F) {
	for _, s := range []string{"Done", "Failed", "λ", "0101", "", strings.Repeat("1", 70), "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var st tokendist.Status
		err := st.UnmarshalText([]byte(s))
		fuzzPrefixed(t, err)
		if err == nil && st.String() != s {
			t.Fatalf("status %q decoded as %v", s, st)
		}
		x, err := tokendist.ParseTreeNode(s)
		fuzzPrefixed(t, err)
		if err == nil {
			want := s
			if want == "" {
				want = "λ"
			}
			if x.String() != want {
				t.Fatalf("tree node %q decoded as %v", s, x)
			}
		}
	})
}

// FuzzBounds checks the closed forms and bounds against exact big-integer arithmetic
// or, where there is no simple oracle, for sign: every integer result is exact or an
// error, never a wrapped value.
func FuzzBounds(f *testing.F) {
	f.Add(int64(3), int64(2), int64(10))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add(int64(62), int64(1), int64(math.MaxInt64))
	f.Add(int64(-1), int64(math.MinInt64), int64(0))
	f.Fuzz(func(t *testing.T, a, b, m int64) {
		h, k := int(a), int(b)
		// KaryTreeBound = min((k−1)h + 1, ⌊(k+2)(h+1)/2⌋) for k ≥ 1, h ≥ 1.
		v, err := tokendist.KaryTreeBound(tokendist.KaryShape{Height: h, Arity: k})
		fuzzPrefixed(t, err)
		if h >= 1 && k >= 1 {
			H, K := big.NewInt(a), big.NewInt(b)
			x := new(big.Int).Sub(K, big.NewInt(1))
			x.Mul(x, H).Add(x, big.NewInt(1))
			y := new(big.Int).Add(K, big.NewInt(2))
			y.Mul(y, new(big.Int).Add(H, big.NewInt(1))).Rsh(y, 1)
			if y.Cmp(x) < 0 {
				x = y
			}
			switch {
			case err == nil && (!x.IsInt64() || x.Int64() != int64(v)):
				t.Fatalf("KaryTreeBound(%d, %d) = %d, exact %v", h, k, v, x)
			case err != nil && x.IsInt64() && x.Int64() <= math.MaxInt:
				t.Fatalf("KaryTreeBound(%d, %d): %v, exact %v fits", h, k, err, x)
			case err != nil && !errors.Is(err, tokendist.ErrOverflow):
				t.Fatalf("KaryTreeBound(%d, %d): %v, not ErrOverflow", h, k, err)
			}
		}
		// PairTime = ⌈|a − b|/2⌉ + 1 exactly, or ErrOverflow when that exceeds MaxInt64.
		d := new(big.Int).Sub(big.NewInt(a), big.NewInt(b))
		d.Abs(d).Add(d, big.NewInt(1)).Rsh(d, 1).Add(d, big.NewInt(tokendist.PairOverhead))
		switch pt, err := tokendist.PairTime(a, b); {
		case d.IsInt64() && (err != nil || pt != d.Int64()):
			t.Fatalf("PairTime(%d, %d) = %d, %v; exact %v", a, b, pt, err, d)
		case !d.IsInt64() && !errors.Is(err, tokendist.ErrOverflow):
			t.Fatalf("PairTime(%d, %d) = %d, %v; exact %v overflows", a, b, pt, err, d)
		}
		// Sign checks on the time bounds and totals.
		dim := int(uint64(a) % 70)
		for name, f := range map[string]func() (int64, error){
			"HypercubeBalanceTimeBound": func() (int64, error) { return tokendist.HypercubeBalanceTimeBound(dim, m) },
			"MaxTotalDiscrepancy":       func() (int64, error) { return tokendist.MaxTotalDiscrepancy(dim, b, m) },
			"BalanceLowerBound":         func() (int64, error) { return tokendist.BalanceLowerBound(dim, b, m, a) },
			"HypercubeFringe":           func() (int64, error) { return tokendist.HypercubeFringe(dim, m) },
			"HammingBallSize":           func() (int64, error) { return tokendist.HammingBallSize(dim, int(b)) },
			"BalancingTime":             func() (int64, error) { return tokendist.BalancingTime(float64(uint64(a)%1000)/1000, int(b), m) },
		} {
			v, err := f()
			fuzzPrefixed(t, err)
			if err == nil && v < 0 {
				t.Fatalf("%s(%d, %d, %d, %d) = %d", name, dim, a, b, m, v)
			}
		}
		cube, _ := tokendist.Hypercube(int(uint64(b) % 6))
		for name, f := range map[string]func() (int64, error){
			"LeightonTime":            func() (int64, error) { return tokendist.LeightonTime(cube, m) },
			"DimensionOrderTimeBound": func() (int64, error) { return tokendist.DimensionOrderTimeBound(cube, m) },
		} {
			v, err := f()
			fuzzPrefixed(t, err)
			if err == nil && v < 0 {
				t.Fatalf("%s(%v, %d) = %d", name, cube, m, v)
			}
		}
	})
}

// FuzzRunMisbehaving runs a balancer whose every step is chosen by the fuzzer from
// hostile actions (resize the loads, steal or forge tokens, wrap the counters, panic,
// return an unprefixed error). Run must return a prefixed error or a valid result, and
// a panic must reach the caller with the balancer's own value.
func FuzzRunMisbehaving(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8}, uint8(4), true)
	f.Add([]byte{7, 7, 7}, uint8(1), false)
	f.Add([]byte{0, 0, 0, 9}, uint8(9), true)
	f.Fuzz(func(t *testing.T, script []byte, n uint8, periodic bool) {
		order := 1 + int(n%12)
		g, _ := tokendist.Path(order)
		loads := make(tokendist.Loads, order)
		loads[0] = math.MaxInt64 / 2
		step := 0
		b := &tokendist.Funcs{StepFunc: func(s *tokendist.State) error {
			if step >= len(script) {
				return nil
			}
			op := script[step]
			step++
			switch op % 10 {
			case 0:
				s.Loads = append(s.Loads, 1)
			case 1:
				s.Loads = s.Loads[:len(s.Loads)-1]
			case 2:
				s.Loads[0]--
			case 3:
				s.Moved += math.MaxInt64 / 3
			case 4:
				s.Time += math.MaxInt64 / 3
			case 5:
				panic("fuzz panic")
			case 6:
				return errors.New("user error")
			case 7:
				if len(s.Loads) > 1 { // a legal move
					s.Loads[0], s.Loads[len(s.Loads)-1] = s.Loads[len(s.Loads)-1], s.Loads[0]
					s.Moved++
				}
			case 8:
				s.Loads[len(s.Loads)-1] = -1
			case 9:
				s.Messages = -1
			}
			return nil
		}}
		if periodic {
			b.PeriodFunc = func(*tokendist.State) int64 { return 1 }
		}
		var res tokendist.Result
		var err error
		panicked := func() (p any) {
			defer func() { p = recover() }()
			res, err = tokendist.Run(context.Background(), g, loads, b, &tokendist.RunOptions{MaxSteps: int64(len(script)) + 1, SampleEvery: 1})
			return nil
		}()
		if panicked != nil {
			if panicked != "fuzz panic" {
				t.Fatalf("panic %v", panicked)
			}
			return
		}
		fuzzPrefixed(t, err)
		if err == nil {
			if len(res.Loads) != order || res.Loads.Total() != loads.Total() || res.Moved < 0 || res.Time < 0 || res.Messages < 0 {
				t.Fatalf("invalid result without error: %v", res)
			}
		} else if res.Status != tokendist.StatusFailed {
			t.Fatalf("error %v with status %v", err, res.Status)
		}
	})
}

// FuzzNetworkEntryPoints hands arbitrary adjacency lists (often not a valid network:
// asymmetric, unsorted, out of range, self-loops) to every entry point that takes a
// Network: each must return a short prefixed error or a result, never panic or hang.
func FuzzNetworkEntryPoints(f *testing.F) {
	f.Add([]byte{3, 2, 1, 2, 2, 0, 2, 2, 0, 1}, uint8(0))
	f.Add([]byte{4, 1, 1, 2, 0, 2, 2, 1, 3, 1, 2}, uint8(1))
	f.Add([]byte{2, 1, 1, 1, 0}, uint8(2))
	f.Add([]byte{3, 1, 5, 1, 200, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		if len(data) == 0 {
			return
		}
		n := int(data[0]) % 12
		lists := make([][]int32, n)
		pos := 1
		for v := 0; v < n && pos < len(data); v++ {
			k := int(data[pos]) % 5
			pos++
			for i := 0; i < k && pos < len(data); i++ {
				lists[v] = append(lists[v], int32(int8(data[pos])))
				pos++
			}
		}
		net := fndListNet(lists...)
		ctx := context.Background()
		calls := []func() error{
			func() error { _, err := tokendist.AsGraph(net); return err },
			func() error { _, err := tokendist.LambdaMax(net, nil); return err },
			func() error { _, err := tokendist.DistanceLoads(net, 0); return err },
			func() error { _, err := tokendist.MSD(net); return err },
			func() error { _, err := tokendist.Fringe(net, []int{0}); return err },
			func() error { _, _, err := tokendist.MinFringe(net, 1); return err },
			func() error { _, err := tokendist.Peripheral(net); return err },
			func() error { _, err := tokendist.LeightonTime(net, 3); return err },
			func() error { _, err := tokendist.ConstructSubgraph(net, 0); return err },
			func() error {
				b, err := tokendist.NewRandomizedDiffusion(net)
				if err != nil {
					return err
				}
				_, err = tokendist.Run(ctx, net, make(tokendist.Loads, n), b, &tokendist.RunOptions{MaxSteps: 5})
				return err
			},
			func() error {
				b, err := tokendist.NewRSWDiffusion(net)
				if err != nil {
					return err
				}
				_, err = tokendist.Run(ctx, net, make(tokendist.Loads, n), b, &tokendist.RunOptions{MaxSteps: 5})
				return err
			},
			func() error { _, err := tokendist.NewHypercubeBalance(net, nil); return err },
			func() error { _, err := tokendist.NewContinuousDiffusion(net, make([]float64, n)); return err },
			func() error { _, err := tokendist.TransitionMatrix(net); return err },
			func() error { _, err := tokendist.Stabilities(net); return err },
		}
		fuzzPrefixed(t, calls[int(which)%len(calls)]())
	})
}
