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

// The excess of a RandomizedDiffusion node of degree deg among D = Δ+1 slots (slots
// 0..deg−1 are its links, the others its own) goes to a uniform r-subset S of the D
// slots. Only S ∩ {0..deg−1} moves tokens: the rest stays at the node, whichever own
// slots it names. A node draws S itself (the subset table, or Floyd's algorithm, O(r +
// D/64)) when that costs O(deg): D ≤ subsetTableMax or 2·deg + 1 ≥ D (every node of a
// regular network). Otherwise it draws S ∩ {0..deg−1} alone, in O(deg), by selection
// sampling (Fan, Muller and Rezucha 1962; Knuth's Algorithm S) stopped after the links:
// slot p = 0, 1, … is taken when a digit uniform on [0, D − p) falls below the number
// of tokens still to place, need.
//
// Why this is exact. Selection sampling run over all D slots gives every r-subset T the
// probability Π_p P(decision at p | decisions before p): the denominators multiply to
// D!/(D−D)! = D!, the numerators of the taken slots to r!, those of the skipped slots
// to (D−r)! (at slot p, need and D − p − need count the tokens and the free slots still
// ahead), so P(T) = r!(D−r)!/D! = 1/C(D, r): S is a uniform r-subset. The decisions at
// slots 0..deg−1 are made before, and do not depend on, any draw for a later slot, so
// stopping after slot deg−1 leaves the law of S ∩ {0..deg−1} unchanged; once need = 0
// every later slot would be skipped with probability 1, so no digit is drawn for it.
// The digits are exactly uniform (digits, nodeStream), so the restriction has exactly
// the law of the paper's scheme: |S ∩ {0..deg−1}| is hypergeometric (D slots, deg
// links, r draws) and, given its size, the set is uniform over the links.

// rdDrawsAll reports whether a node of degree deg among D slots draws a subset of all
// D slots (O(deg) work), rather than its links' share alone.
func rdDrawsAll(D, deg uint64) bool { return D <= subsetTableMax || 2*deg+1 >= D }

// rdMaskWords returns the words of the slot mask a node of degree deg ≥ 1 draws into:
// ⌈D/64⌉ when it draws all D slots, else ⌈deg/64⌉. Either is at most deg when D > 64.
func rdMaskWords(D, deg uint64) int {
	if rdDrawsAll(D, deg) {
		return int((D + 63) / 64)
	}
	return int((deg + 63) / 64)
}

// selectBatch returns the product of the digit ranges D−p, D−p−1, … that one word
// serves in selection sampling, and the slot e after the last of them (e ≤ deg).
func selectBatch(D, p, deg uint64) (prod, e uint64) {
	prod, e = D-p, p+1
	for e < deg {
		hi, lo := bits.Mul64(prod, D-e)
		if hi != 0 || lo > digitLimit {
			break
		}
		prod, e = lo, e+1
	}
	return prod, e
}

// selectSlots sets in mask (⌈deg/64⌉ words, cleared first) the links 0..deg−1 of a
// node that r excess tokens among D slots reach, by selection sampling stopped after
// the links (see above): exactly the law of a uniform r-subset of the D slots cut to
// the links. deg < D. O(deg), several digits per word.
func selectSlots(st *digits, D, deg, r uint64, mask []uint64) {
	clear(mask)
	need := r
	for p := uint64(0); p < deg && need > 0; {
		prod, e := selectBatch(D, p, deg)
		st.begin(prod)
		for ; p < e && need > 0; p++ {
			if st.next(D-p) < need {
				mask[p>>6] |= 1 << (p & 63)
				need--
			}
		}
	}
}

// expandShares turns the slot mask held at the start of out (bit p: link p gets an
// excess token) into the node's shares q + bit p, in place, and returns the excess
// sent. The mask takes at most len(out) words; out[p] is written after the bits of
// links below p are read (word p>>6 < p, or p = 0), so nothing is read overwritten.
func expandShares(out []uint64, q uint64) (sent uint64) {
	for p := len(out) - 1; p >= 0; p-- {
		bit := out[p>>6] >> (uint(p) & 63) & 1
		out[p] = q + bit
		sent += bit
	}
	return sent
}
