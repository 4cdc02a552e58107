package tokendist

import (
	"math/bits"
	"math/rand/v2"
)

// digitLimit bounds the product of the ranges served by one 64-bit word. A word is
// rejected with probability below digitLimit/2^64 = 1/16, so a batch costs at most
// 16/15 draws on average.
const digitLimit = 1 << 60

// digits serves exactly uniform bounded random numbers ("digits"), many per 64-bit PCG
// draw. A batch whose ranges r_1..r_m multiply to prod starts with begin(prod), which
// draws a word x and applies Lemire's rejection test to x·prod, so that
// H = ⌊x·prod/2^64⌋ is exactly uniform on [0, prod). next(r_1), ..., next(r_m) then
// return the mixed-radix digits of H, most significant first: after k calls x holds
// x·r_1⋯r_k mod 2^64 and the digit is the high word of the next product. The digits
// are therefore independent and exactly uniform. Random-number generation is the
// cost that dominates a round of RandomizedDiffusion; this makes it one multiply per
// choice plus one PCG step per batch.
type digits struct {
	src rand.PCG
	x   uint64
}

// begin starts a batch whose ranges multiply to prod, 1 ≤ prod < 2^64.
func (g *digits) begin(prod uint64) {
	for {
		if x := g.src.Uint64(); lemireAccepts(x, prod) {
			g.x = x
			return
		}
	}
}

// next returns the batch's next digit, uniform on [0, r).
func (g *digits) next(r uint64) uint64 { return nextDigit(&g.x, r) }

// lemireAccepts reports whether the word x passes Lemire's rejection test for prod: the
// 2^64 mod prod words that would bias ⌊x·prod/2^64⌋ are rejected.
func lemireAccepts(x, prod uint64) bool {
	_, lo := bits.Mul64(x, prod)
	return lo >= prod || lo >= -prod%prod
}

// nextDigit returns the next mixed-radix digit of a batch, uniform on [0, r), and keeps
// x·r mod 2^64 in *x for the next one.
func nextDigit(x *uint64, r uint64) uint64 {
	hi, lo := bits.Mul64(*x, r)
	*x = lo
	return hi
}

// fixedDigits serves digits of one fixed range r, refilling batches of r^k ≤ digitLimit.
type fixedDigits struct {
	digits
	r, prod  uint64
	per, off int
}

func (f *fixedDigits) reset(r uint64) {
	f.r, f.prod, f.per, f.off = r, 1, 0, 0
	for r > 1 {
		hi, lo := bits.Mul64(f.prod, r)
		if hi != 0 || lo > digitLimit {
			break
		}
		f.prod, f.per = lo, f.per+1
	}
	if f.per == 0 {
		f.prod, f.per = r, 1 // r > digitLimit: one digit per word
	}
}

// draw returns a digit uniform on [0, r).
func (f *fixedDigits) draw() uint64 {
	if f.r <= 1 {
		return 0
	}
	if f.off == 0 {
		f.begin(f.prod)
		f.off = f.per
	}
	f.off--
	return f.next(f.r)
}

// subsetTableMax is the largest number of slots for which RandomizedDiffusion looks up
// random subsets in a table (2^D masks) instead of running Floyd's algorithm.
const subsetTableMax = 12

// subsetTable lists, for every r in 0..D, the C(D, r) r-subsets of {0..D-1} as bit
// masks: masks[off[r]+i] is subset number i. Drawing i uniformly picks a uniform
// r-subset with a single digit.
type subsetTable struct {
	masks []uint64
	off   []int
	binom []uint64
}

func newSubsetTable(D int) subsetTable {
	t := subsetTable{off: make([]int, D+2), binom: make([]uint64, D+1)}
	for r := 0; r <= D; r++ {
		t.off[r] = len(t.masks)
		for m := uint64(0); m < 1<<D; m++ {
			if bits.OnesCount64(m) == r {
				t.masks = append(t.masks, m)
			}
		}
		t.binom[r] = uint64(len(t.masks) - t.off[r])
	}
	t.off[D+1] = len(t.masks)
	return t
}

// divider divides by a fixed d ≥ 1. Dividends below 2^32 take one multiplication
// (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019: with
// M = ⌈2^64/d⌉, ⌊n/d⌋ is the high word of M·n for every n < 2^32); larger ones, and
// d = 1 (where M overflows), use the hardware division.
type divider struct {
	d, m, limit uint64
}

func newDivider(d uint64) divider {
	if d == 1 {
		return divider{d: 1}
	}
	return divider{d: d, m: ^uint64(0)/d + 1, limit: 1 << 32}
}

// div returns ⌊n/d⌋.
func (v divider) div(n uint64) uint64 {
	if n < v.limit {
		hi, _ := bits.Mul64(v.m, n)
		return hi
	}
	return n / v.d
}
