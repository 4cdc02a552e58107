package plot

import (
	"math"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
)

// formatTick writes a tick value in plain decimal ("0.25", "64", "1000000") and only
// far outside that range in short scientific form ("1e-7", "3e12"), never "1e+01".
func formatTick(v float64) string {
	if v == 0 {
		return "0"
	}
	// Round away the float noise of tick arithmetic (0.30000000000000004).
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	if e := math.Floor(math.Log10(math.Abs(v))); e >= -4 && e <= 6 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // 1e+07, 2.5e-08
	mant, exp, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(exp, "-")
	exp = strings.TrimLeft(exp, "+-0")
	if neg {
		exp = "-" + exp
	}
	return mant + "e" + exp
}

// linTicks is gonum/plot's DefaultTicks with plain labels and a labelled 0 whenever the
// axis reaches 0.
type linTicks struct{}

func (linTicks) Ticks(min, max float64) []gplot.Tick {
	ticks := gplot.DefaultTicks{}.Ticks(min, max)
	eps := 1e-9 * (max - min)
	hasZero := false
	for i := range ticks {
		if math.Abs(ticks[i].Value) <= eps {
			ticks[i].Value = 0
			if min <= 0 && 0 <= max {
				ticks[i].Label = "0"
				hasZero = true
			}
		}
		if ticks[i].Label != "" {
			ticks[i].Label = formatTick(ticks[i].Value)
		}
	}
	if !hasZero && min <= 0 && 0 <= max {
		ticks = append(ticks, gplot.Tick{Value: 0, Label: "0"})
	}
	return ticks
}

// logTicks labels a logarithmic axis with powers of 2 (1, 2, 4, … 64) when the range
// spans at most 2^6 from at least 1/8, with powers of 10 (10, 100, 1000) otherwise,
// adding 2·10^k and 5·10^k labels when fewer than three decades show, and with plain
// linear ticks on a range too narrow for either. zero, if positive, is the position of
// the row that stands for the value 0 (drawn one tick step below floor); no other tick
// is placed below floor.
type logTicks struct {
	base  float64 // 2, 10, or 0 for linear ticks
	floor float64 // lowest value that gets an ordinary tick
	zero  float64 // position of the 0 row, or 0 for none
}

// planLogTicks chooses the base for positive data in [lo, hi] and, when the data also
// holds zeros, the position of the 0 row.
func planLogTicks(lo, hi float64, zeros bool) logTicks {
	t := logTicks{floor: lo}
	ratio := hi / lo
	switch {
	case lo >= 0.125 && ratio <= 64 && countPowers(lo, hi, 2) >= 2:
		t.base = 2
	case countPowers(lo, hi, 10) >= 1 && ratio >= 10:
		t.base = 10
	}
	if !zeros {
		return t
	}
	if t.base == 0 {
		t.zero = lo / 2
		return t
	}
	t.floor = math.Pow(t.base, math.Floor(math.Log(lo)/math.Log(t.base)+1e-9))
	t.zero = t.floor / t.base
	return t
}

// countPowers counts the integer powers of base in [lo, hi].
func countPowers(lo, hi, base float64) int {
	a := math.Ceil(math.Log(lo)/math.Log(base) - 1e-9)
	b := math.Floor(math.Log(hi)/math.Log(base) + 1e-9)
	if b < a {
		return 0
	}
	return int(b-a) + 1
}

func (t logTicks) Ticks(min, max float64) []gplot.Tick {
	lo := math.Max(min, t.floor)
	var ticks []gplot.Tick
	if t.zero > 0 && t.zero >= min && t.zero <= max {
		ticks = append(ticks, gplot.Tick{Value: t.zero, Label: "0"})
	}
	if !(lo < max) {
		return ticks
	}
	if t.base == 0 {
		for _, k := range (linTicks{}).Ticks(lo, max) {
			if k.Value > 0 {
				ticks = append(ticks, k)
			}
		}
		return ticks
	}
	e0 := math.Floor(math.Log(lo)/math.Log(t.base) + 1e-9)
	e1 := math.Ceil(math.Log(max)/math.Log(t.base) - 1e-9)
	if t.base == 2 {
		for e := e0; e <= e1; e++ {
			v := math.Pow(2, e)
			if v >= lo*(1-1e-9) && v <= max*(1+1e-9) {
				ticks = append(ticks, gplot.Tick{Value: v, Label: formatTick(v)})
			}
		}
		return ticks
	}
	// Base 10: decades labelled (every k-th when there are many), 2..9 minor; 2 and 5
	// labelled when fewer than three decades show.
	decades := countPowers(lo, max, 10)
	every := 1
	if decades > 8 {
		every = (decades + 7) / 8
	}
	minors := 9.0 // 1·10^e … 9·10^e; decades only when there are many
	if decades > 6 {
		minors = 1
	}
	for e := e0; e <= e1; e++ {
		for m := 1.0; m <= minors; m++ {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			label := ""
			switch {
			case m == 1 && int(math.Abs(e))%every == 0:
				label = formatTick(v)
			case (m == 2 || m == 5) && decades < 3:
				label = formatTick(v)
			}
			ticks = append(ticks, gplot.Tick{Value: v, Label: label})
		}
	}
	return ticks
}
