package tokendist

import (
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/tokendist/tokendist/internal/par"
	"github.com/tokendist/tokendist/internal/rng"
)

// maxDenseOrder bounds the order of a dense transition matrix (800 MB of float64).
const maxDenseOrder = 10000

// autoDenseOrder is the largest order for which LambdaMax's automatic choice is dense:
// the dense solver costs O(n³) and is exact; above 64 nodes Lanczos was faster on
// every family measured (BenchmarkLambdaMaxAuto; the figures are in
// docs/performance.md).
const autoDenseOrder = 64

// TransitionMatrix returns the diffusion matrix P of Berenbrink et al., section 2, as a
// dense symmetric gonum matrix: P[i][j] = 1/(d+1) for every link {i, j} and
// P[i][i] = 1 − deg(i)/(d+1), with d the maximum degree (on a d-regular network the
// paper's P; otherwise the lazy walk). It rejects a nil, empty or disconnected network,
// isolated nodes, and more than 10000 nodes (use LambdaMax's Lanczos method there). It
// costs O(n²) time and memory.
func TransitionMatrix(net Network) (*mat.SymDense, error) {
	ln, err := newLazyNet(net)
	if err != nil {
		return nil, err
	}
	return ln.dense()
}

func (ln *lazyNet) dense() (*mat.SymDense, error) {
	n := ln.g.Order()
	if n > maxDenseOrder {
		return nil, badParam("dense transition matrix of %d nodes exceeds %d nodes", n, maxDenseOrder)
	}
	// The matrix, and gonum's eigensolver's copy and work space: three n×n float64s.
	if err := checkAlloc(fmt.Sprintf("dense transition matrix of %d nodes", n), int64(n)*int64(n), 24); err != nil {
		return nil, err
	}
	D := float64(ln.d + 1)
	p := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		p.SetSym(i, i, float64(ln.d+1-ln.g.Degree(i))/D)
		for _, j := range ln.g.Neighbors(i) {
			if int(j) > i {
				p.SetSym(i, int(j), 1/D)
			}
		}
	}
	return p, nil
}

// SpectralMethod selects how LambdaMax computes the spectrum.
type SpectralMethod int

// The spectral methods.
const (
	// SpectralAuto is dense up to 64 nodes and Lanczos above (where Lanczos was
	// measured faster).
	SpectralAuto SpectralMethod = iota
	// SpectralDense is gonum's symmetric eigensolver (mat.EigenSym) on
	// TransitionMatrix: O(n³) time, O(n²) memory, up to 10000 nodes.
	SpectralDense
	// SpectralLanczos is the Lanczos iteration on the sparse P restricted to 1^⊥.
	SpectralLanczos
	// SpectralClosedForm marks spectra from HypercubeSpectrum and TorusSpectrum.
	SpectralClosedForm
)

var spectralNames = [...]string{"Auto", "Dense", "Lanczos", "ClosedForm"}

// String names the method.
func (m SpectralMethod) String() string {
	if m < 0 || int(m) >= len(spectralNames) {
		return fmt.Sprintf("SpectralMethod(%d)", int(m))
	}
	return spectralNames[m]
}

// SpectralOptions configures LambdaMax; the zero value is the default.
type SpectralOptions struct {
	// Method selects the algorithm (default SpectralAuto).
	Method SpectralMethod
	// Tol is the accuracy Lanczos aims at for λ_2 and λ_n (0: 1e-10; negative or NaN
	// is an error).
	Tol float64
	// GapTol, if positive, replaces Tol by a relative accuracy of the spectral gap:
	// Lanczos stops when the bound on λ_2 (and on λ_n) is at most GapTol times the
	// smallest gap 1 − |λ| that the value and its bound allow, so that 1 − λ_max is
	// accurate to GapTol relative (negative or NaN is an error).
	GapTol float64
	// MaxIter bounds the Lanczos iterations (0: 100000; negative is an error).
	MaxIter int
	// Seed fixes Lanczos's random start vector.
	Seed uint64
	// IntervalTol, if positive, replaces Tol and GapTol by a stopping rule on the
	// certified interval of λ_max (Spectrum.Lower, Spectrum.Upper): Lanczos stops at
	// the first convergence check at which Upper < 1 and Upper − Lower ≤
	// IntervalTol·(1 − Upper), so that Upper overestimates λ_max by at most IntervalTol
	// times the gap 1 − Upper (0.01: τ(G, K) from Upper is at most about 1 % long).
	// Bound2 and BoundN then are the certified ones (Upper's end minus its Ritz value).
	// Its cost grows like ln(√n/Delta)/√(IntervalTol·gap) iterations where the top of
	// the spectrum is a continuum (random regular graphs: 365 at 10^6 nodes for 0.01,
	// against 1040 for the default Tol), and follows the Ritz residual's convergence
	// where the top eigenvalue is isolated (Torus(1000, 1000): 2438, against 1743)
	// (docs/performance.md, "Certified λ_max"). On a small network with a small gap the recurrence can end (n − 1
	// iterations) before the rule is met: LambdaMax then returns ErrNotConverged with
	// the interval it has (SpectralDense is exact there). Negative or NaN is an error.
	IntervalTol float64
	// Delta is the probability, over Lanczos's random start, with which Spectrum.Upper
	// may fail to bound λ_max (0: 1e-6; outside [0, 1) or NaN is an error). The cost
	// grows like ln(1/Delta).
	Delta float64
}

// defaultDelta is SpectralOptions.Delta's default.
const defaultDelta = 1e-6

// delta returns Delta or its default.
func (o *SpectralOptions) delta() float64 {
	if o.Delta > 0 {
		return o.Delta
	}
	return defaultDelta
}

// Spectrum holds the extreme non-trivial eigenvalues of the transition matrix P of a
// connected network (Berenbrink et al., section 2): 1 = λ_1 > λ_2 ≥ ... ≥ λ_n > −1.
type Spectrum struct {
	// N is the number of nodes.
	N int `json:"n"`
	// Lambda2 and LambdaN are λ_2 and λ_n; both are 0 for a single node.
	Lambda2 float64 `json:"lambda2"`
	LambdaN float64 `json:"lambdaN"`
	// LambdaMax is λ_max = max(λ_2, |λ_n|), which governs the convergence of the
	// continuous process (Lemma 2.2) and τ(G, K) (Theorem 2.2).
	LambdaMax float64 `json:"lambdaMax"`
	// Bound2 and BoundN estimate the absolute errors of Lambda2 and LambdaN: the
	// solver's rounding for dense and closed forms, and for Lanczos min(r, r²/gap)
	// from the Ritz residual r and the gap to the next Ritz value, plus 8 units of
	// rounding. A Lanczos value is ≤ λ_2 and ≥ λ_n in exact arithmetic. When one end is
	// clearly smaller in absolute value, Lanczos stops once λ_max is accurate, and that
	// end reports a bound that holds unconverged (λ_n ≥ (1−d)/(d+1), λ_2 < 1), which
	// may exceed Tol; the end that does not set λ_max reports at least its certified
	// bound (the distance from its Ritz value to its end of the certified interval, see
	// Upper). The Ritz-gap bound is not proved: at loose tolerances (1e-3) the gap to
	// the next Ritz value overestimates the true gap and the bound can be below the
	// error (TestCertifiedBoundsSweep counts the cases). Under
	// SpectralOptions.IntervalTol both are the certified bounds.
	Bound2 float64 `json:"bound2"`
	BoundN float64 `json:"boundN"`
	// Method is the method used, and Iterations the Lanczos iterations (0 otherwise).
	Method     SpectralMethod `json:"method"`
	Iterations int            `json:"iterations"`
	// Lower and Upper bound λ_max: Lower ≤ λ_max ≤ Upper ≤ 1. For the dense solver and
	// the closed forms they are LambdaMax ∓ the rounding bound, and Delta is 0. For
	// Lanczos, Lower is the largest |Ritz value| (a Rayleigh quotient: Lower ≤ λ_max
	// holds whatever the start) and Upper comes from the Lanczos polynomial (van
	// Dorsselaer, Hochstenbach and van der Vorst, SIAM J. Matrix Anal. Appl. 22, 2000):
	// in exact arithmetic, Upper ≥ λ_max holds with probability at least 1 − Delta over
	// the random start (SpectralOptions.Delta), at every iteration at once, whatever
	// the spectrum — no gap or separation is assumed. Rounding is covered by an
	// allowance of (8 + 2k) units in the last place after k iterations, which is
	// measured (TestCertifiedBoundsSweep), not proved. Upper = 1 says nothing (too few
	// iterations). BalancingTime(Upper, n, K) is a τ(G, K) that is not short with that
	// probability; docs/performance.md ("Certified λ_max") has the proof.
	Lower float64 `json:"lower,omitempty"`
	Upper float64 `json:"upper,omitempty"`
	Delta float64 `json:"delta,omitempty"`
}

// Gap returns the spectral gap 1 − λ_max. It costs O(1).
func (sp Spectrum) Gap() float64 { return 1 - sp.LambdaMax }

// LambdaMax returns the spectrum of the transition matrix P (TransitionMatrix) of a
// connected network: λ_2, λ_n and λ_max = max(λ_2, |λ_n|) (Berenbrink et al., section
// 2). SpectralDense factorises the dense P with gonum (O(n³)); SpectralLanczos runs the
// Lanczos iteration on the sparse P restricted to 1^⊥ (the eigenvector of λ_1 = 1 is
// projected out every iteration), without reorthogonalisation: it keeps three vectors
// and the tridiagonal matrix, so it costs O(n + m) memory (24 bytes a node are checked
// against the memory budget before it starts, ErrTooLarge otherwise) and O(n + m) time per
// iteration, with about √(range/gap)·log(1/Tol) iterations where gap separates λ_2 (or
// λ_n) from the next distinct eigenvalue. Lanczos uses the available cores on large
// networks with fixed-order sums, so its result does not depend on the number of
// workers. It rejects a nil, empty or disconnected network, isolated nodes and
// bad options, and returns ErrNotConverged (with the best estimate) if MaxIter runs out.
// Every spectrum carries a certified interval Lower ≤ λ_max ≤ Upper (Spectrum.Upper: for
// Lanczos, with probability ≥ 1 − Delta over the random start), and
// SpectralOptions.IntervalTol stops Lanczos once that interval is narrow relative to the
// gap. On networks of at least 2^22 nodes without locality, pass A is
// propagation-blocked (12 B more per link end). HypercubeSpectrum and TorusSpectrum give
// closed forms to check it against.
func LambdaMax(net Network, opts *SpectralOptions) (Spectrum, error) {
	var o SpectralOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Tol < 0 || math.IsNaN(o.Tol):
		return Spectrum{}, badParam("spectral tolerance %v is not positive", o.Tol)
	case o.GapTol < 0 || math.IsNaN(o.GapTol):
		return Spectrum{}, badParam("spectral GapTol %v is not positive", o.GapTol)
	case o.MaxIter < 0:
		return Spectrum{}, badParam("spectral MaxIter %d is negative", o.MaxIter)
	case o.IntervalTol < 0 || math.IsNaN(o.IntervalTol):
		return Spectrum{}, badParam("spectral IntervalTol %v is not positive", o.IntervalTol)
	case !(o.Delta >= 0 && o.Delta < 1):
		return Spectrum{}, badParam("spectral Delta %v is outside [0, 1)", o.Delta)
	case o.Method < SpectralAuto || o.Method > SpectralLanczos:
		return Spectrum{}, badParam("LambdaMax cannot use method %v", o.Method)
	}
	if o.Tol == 0 {
		o.Tol = 1e-10
	}
	if o.MaxIter == 0 {
		o.MaxIter = 100000
	}
	ln, err := newLazyNet(net)
	if err != nil {
		return Spectrum{}, err
	}
	n := ln.g.Order()
	if n == 1 {
		return Spectrum{N: 1, Method: o.Method}, nil
	}
	if o.Method == SpectralAuto {
		o.Method = SpectralLanczos
		if n <= autoDenseOrder {
			o.Method = SpectralDense
		}
	}
	if o.Method == SpectralDense {
		return ln.denseSpectrum()
	}
	return ln.lanczosSpectrum(o)
}

func (ln *lazyNet) denseSpectrum() (Spectrum, error) {
	p, err := ln.dense()
	if err != nil {
		return Spectrum{}, err
	}
	var eig mat.EigenSym
	if !eig.Factorize(p, false) {
		return Spectrum{}, fmt.Errorf("%w: dense eigensolver failed on %v", ErrNotConverged, ln.g)
	}
	vals := eig.Values(nil) // ascending
	n := len(vals)
	bound := 8 * float64(n) * 0x1p-52
	return exactSpectrum(n, vals[n-2], vals[0], bound, bound, SpectralDense), nil
}

func newSpectrum(n int, l2, ln float64, b2, bn float64, m SpectralMethod, it int) Spectrum {
	return Spectrum{N: n, Lambda2: l2, LambdaN: ln, LambdaMax: math.Max(l2, -ln), Bound2: b2, BoundN: bn, Method: m, Iterations: it}
}

// exactSpectrum is newSpectrum for the dense solver and the closed forms: Lower and
// Upper are λ_max ∓ its rounding bound, certain (Delta = 0).
func exactSpectrum(n int, l2, ln float64, b2, bn float64, m SpectralMethod) Spectrum {
	sp := newSpectrum(n, l2, ln, b2, bn, m, 0)
	b := math.Max(b2, bn)
	sp.Lower = math.Max(0, sp.LambdaMax-b)
	sp.Upper = math.Min(1, sp.LambdaMax+b)
	return sp
}

// lanczos runs the Lanczos recurrence β_{k+1}·v_{k+1} = P·v_k − α_k·v_k − β_k·v_{k−1}
// on 1^⊥. Vectors are stored unnormalised with a scale (v = s·x), so that a step is two
// fused passes: c = s_b·P·b − β·s_a·a, written over a (a[i] is read only at i), with
// the partial sums of c·b, c and b; then c −= α·s_b·b + mean, with the partial sums of
// c². Two vectors suffice. Partial sums are per 4096-node chunk, added in chunk order.
type lanczos struct {
	ln           *lazyNet
	a, b         []float64
	sa, sb, beta float64
	alpha, shift float64
	parts        []float64 // 3 per chunk
	regular      bool
	adj          []int32
	delta        []int16 // the adjacency as offsets, on banded networks
	runs         *stencilRuns
	off          []int
	d            int
	grp          par.Group
	workers      int
	passA, passB func(lo, hi int)
	bin          *binned // the propagation-blocked pass A, on large networks without locality
}

// lanczosNodeBytes is what a Lanczos run reserves per node against the memory budget:
// its two vectors (16 bytes) and the certifier's and chunk sums' share.
const lanczosNodeBytes = 24

func newLanczos(ln *lazyNet, seed uint64) *lanczos {
	n, nc := ln.g.Order(), ln.chunks()
	l := &lanczos{ln: ln, a: make([]float64, n), b: make([]float64, n), parts: make([]float64, 3*nc)}
	l.workers = ln.workers(runtime.GOMAXPROCS(0))
	l.regular = ln.g.IsRegular()
	l.adj, l.off, l.d = ln.g.adj, ln.g.off, ln.d
	if l.regular && l.d == 4 {
		l.runs = newStencilRuns(ln)
	} else {
		l.delta = bandDeltas(ln.g)
	}
	l.passA, l.passB = l.passAChunks, l.passBChunks
	// The blocked pass needs 14 B per link end at most; without that room the gather
	// kernel runs (the same result up to rounding, slower).
	if l.runs == nil && l.delta == nil && n >= binnedMinOrder && checkAlloc("Lanczos bins", int64(len(ln.g.adj)), 14) == nil {
		l.bin = newBinned(ln, binShiftFor(n), l.workers)
	}
	// Random start in 1^⊥, one stream per chunk: standard normal entries, then the
	// mean removed (the orthogonal projection onto 1^⊥). A standard normal vector's
	// projection is a standard normal vector of 1^⊥, whose direction is uniform on the
	// unit sphere of 1^⊥: the distribution the certified bound (certUpper) assumes.
	sum := 0.0
	for c := 0; c < nc; c++ {
		r := rng.New(seed, -1, c)
		v0, v1 := ln.chunkRange(c)
		for i := v0; i < v1; i++ {
			l.b[i] = r.NormFloat64()
			sum += l.b[i]
		}
	}
	mean, norm := sum/float64(n), 0.0
	for i := range l.b {
		l.b[i] -= mean
		norm += l.b[i] * l.b[i]
	}
	l.sb = 1 / math.Sqrt(norm)
	return l
}

// step performs one Lanczos step and returns α_k and β_{k+1}.
func (l *lanczos) step() (float64, float64) {
	nc := l.ln.chunks()
	if l.bin != nil {
		l.bin.passA(l)
	} else {
		l.grp.For(nc, l.workers, l.passA)
	}
	var dot, sc, sb float64
	for c := 0; c < nc; c++ {
		dot, sc, sb = dot+l.parts[3*c], sc+l.parts[3*c+1], sb+l.parts[3*c+2]
	}
	l.alpha = l.sb * dot
	l.shift = (sc - l.alpha*l.sb*sb) / float64(len(l.a))
	l.grp.For(nc, l.workers, l.passB)
	norm2 := 0.0
	for c := 0; c < nc; c++ {
		norm2 += l.parts[3*c]
	}
	beta := math.Sqrt(norm2)
	l.a, l.b = l.b, l.a // a holds c
	l.sa, l.sb, l.beta = l.sb, 1/beta, beta
	return l.alpha, beta
}

func (l *lanczos) passAChunks(lo, hi int) {
	sb, bsa := l.sb/float64(l.d+1), l.beta*l.sa
	for ch := lo; ch < hi; ch++ {
		v0, v1 := l.ln.chunkRange(ch)
		var p [3]float64
		switch {
		case l.runs != nil:
			p = passARuns4(l.a, l.b, l.runs, ch, v0, v1, sb, bsa)
		case l.regular && l.d == 4:
			p = passA4(l.a[v0:v1], l.b, l.adj[4*v0:4*v1], v0, sb, bsa)
		case l.delta != nil:
			p = passA(l, v0, v1, l.delta, 1, sb, bsa)
		default:
			p = passA(l, v0, v1, l.adj, 0, sb, bsa)
		}
		copy(l.parts[3*ch:3*ch+3], p[:])
	}
}

// stencilRuns describes a 4-regular network whose nodes fall into few runs of
// consecutive nodes with the same neighbour offsets (a torus or a grid in index order:
// a few runs per row): the neighbours of node i in run r are i + delta[4r..4r+3], in
// adjacency order. Pass A then reads no adjacency at all.
type stencilRuns struct {
	start []int32 // run r is start[r]..start[r+1]−1; start[len−1] = n
	delta []int32 // 4 per run
	first []int32 // the run holding the first node of each chunk
}

// newStencilRuns returns the runs of a 4-regular network, or nil when there are more
// than n/16 of them (the adjacency then costs little more). It costs O(n).
func newStencilRuns(ln *lazyNet) *stencilRuns {
	g, n := ln.g, ln.g.Order()
	offsets := func(i int) (dl [4]int32) {
		for k, j := range g.adj[4*i : 4*i+4] {
			dl[k] = j - int32(i)
		}
		return dl
	}
	// Count first: a network without locality allocates nothing.
	runs := 0
	for i := 0; i < n; i++ {
		if i == 0 || offsets(i) != offsets(i-1) {
			if runs++; runs > n/16 {
				return nil
			}
		}
	}
	r := &stencilRuns{start: make([]int32, 0, runs+1), delta: make([]int32, 0, 4*runs)}
	for i := 0; i < n; i++ {
		if dl := offsets(i); i == 0 || dl != offsets(i-1) {
			r.start = append(r.start, int32(i))
			r.delta = append(r.delta, dl[:]...)
		}
	}
	r.start = append(r.start, int32(n))
	for c, run := 0, 0; c < ln.chunks(); c++ {
		v0, _ := ln.chunkRange(c)
		for int(r.start[run+1]) <= v0 {
			run++
		}
		r.first = append(r.first, int32(run))
	}
	return r
}

// passARuns4 is passA4 on the chunk v0..v1−1 of a network described by runs: the same
// additions in the same order, so the same result bit for bit.
func passARuns4(a, b []float64, runs *stencilRuns, ch, v0, v1 int, sb, bsa float64) [3]float64 {
	var dot, sc, sum [2]float64 // node i adds to set (i−v0)&1, in increasing i
	one := func(i, set int, d []int32) {
		s := b[i] + b[i+int(d[0])] + b[i+int(d[1])] + b[i+int(d[2])] + b[i+int(d[3])]
		c := sb*s - bsa*a[i]
		a[i] = c
		dot[set], sc[set], sum[set] = dot[set]+c*b[i], sc[set]+c, sum[set]+b[i]
	}
	for r := int(runs.first[ch]); r+1 < len(runs.start) && int(runs.start[r]) < v1; r++ {
		lo, hi := max(int(runs.start[r]), v0), min(int(runs.start[r+1]), v1)
		d := runs.delta[4*r : 4*r+4]
		i := lo
		if (i-v0)&1 == 1 && i < hi {
			one(i, 1, d)
			i++
		}
		if m := (hi - i) &^ 1; m > 0 {
			aa, bb := a[i:i+m], b[i:i+m]
			n0, n1 := b[i+int(d[0]):][:m], b[i+int(d[1]):][:m]
			n2, n3 := b[i+int(d[2]):][:m], b[i+int(d[3]):][:m]
			dot0, sc0, sum0, dot1, sc1, sum1 := dot[0], sc[0], sum[0], dot[1], sc[1], sum[1]
			for k := 0; k+1 < len(aa); k += 2 {
				s0 := bb[k] + n0[k] + n1[k] + n2[k] + n3[k]
				s1 := bb[k+1] + n0[k+1] + n1[k+1] + n2[k+1] + n3[k+1]
				c0 := sb*s0 - bsa*aa[k]
				c1 := sb*s1 - bsa*aa[k+1]
				aa[k], aa[k+1] = c0, c1
				dot0, sc0, sum0 = dot0+c0*bb[k], sc0+c0, sum0+bb[k]
				dot1, sc1, sum1 = dot1+c1*bb[k+1], sc1+c1, sum1+bb[k+1]
			}
			dot[0], sc[0], sum[0], dot[1], sc[1], sum[1] = dot0, sc0, sum0, dot1, sc1, sum1
			i += m
		}
		if i < hi {
			one(i, 0, d)
		}
	}
	return [3]float64{dot[0] + dot[1], sc[0] + sc[1], sum[0] + sum[1]}
}

// passA4 is passA on a 4-regular network for the nodes v0..v0+len(a)−1, whose ends
// are nb: it overwrites a with c = sb·(d+1)·P·b − bsa·a and returns the sums of c·b, c
// and b, with the additions in passA's order (the same result bit for bit).
func passA4(a, b []float64, nb []int32, v0 int, sb, bsa float64) [3]float64 {
	bb := b[v0 : v0+len(a)]
	nb = nb[:4*len(a)]
	var dot0, sc0, sum0, dot1, sc1, sum1 float64
	k := 0
	for ; k+1 < len(a); k += 2 {
		e := nb[4*k : 4*k+8]
		s0 := bb[k] + b[e[0]] + b[e[1]] + b[e[2]] + b[e[3]]
		s1 := bb[k+1] + b[e[4]] + b[e[5]] + b[e[6]] + b[e[7]]
		c0 := sb*s0 - bsa*a[k]
		c1 := sb*s1 - bsa*a[k+1]
		a[k], a[k+1] = c0, c1
		dot0, sc0, sum0 = dot0+c0*bb[k], sc0+c0, sum0+bb[k]
		dot1, sc1, sum1 = dot1+c1*bb[k+1], sc1+c1, sum1+bb[k+1]
	}
	if k < len(a) {
		e := nb[4*k : 4*k+4]
		s0 := bb[k] + b[e[0]] + b[e[1]] + b[e[2]] + b[e[3]]
		c0 := sb*s0 - bsa*a[k]
		a[k] = c0
		dot0, sc0, sum0 = dot0+c0*bb[k], sc0+c0, sum0+bb[k]
	}
	return [3]float64{dot0 + dot1, sc0 + sc1, sum0 + sum1}
}

// passA overwrites a[v0:v1] with c = sb·(d+1)·P·b − bsa·a and returns its partial
// sums of c·b, c and b. The neighbours of node i are base + adj[e] for its ends e, with
// base = rel·i: absolute indices (rel = 0) or 16-bit offsets on banded networks (rel =
// 1, half the memory traffic). Two interleaved sets of sums break the floating-point
// dependency chains; the order of the additions stays fixed.
func passA[N int16 | int32](l *lanczos, v0, v1 int, adj []N, rel int, sb, bsa float64) [3]float64 {
	a, b := l.a, l.b
	// pv returns (d+1)·(P·b)_i.
	pv := func(i int) float64 {
		var nb []N
		if l.regular { // the ends of i are d·i..d·i+d−1: no offsets to read
			nb = adj[l.d*i : l.d*i+l.d]
		} else {
			nb = adj[l.off[i]:l.off[i+1]]
		}
		s, base := float64(l.d+1-len(nb))*b[i], rel*i
		for _, j := range nb {
			s += b[base+int(j)]
		}
		return s
	}
	var dot0, sc0, sum0, dot1, sc1, sum1 float64
	i := v0
	for ; i+1 < v1; i += 2 {
		c0 := sb*pv(i) - bsa*a[i]
		c1 := sb*pv(i+1) - bsa*a[i+1]
		a[i], a[i+1] = c0, c1
		dot0, sc0, sum0 = dot0+c0*b[i], sc0+c0, sum0+b[i]
		dot1, sc1, sum1 = dot1+c1*b[i+1], sc1+c1, sum1+b[i+1]
	}
	if i < v1 {
		c0 := sb*pv(i) - bsa*a[i]
		a[i] = c0
		dot0, sc0, sum0 = dot0+c0*b[i], sc0+c0, sum0+b[i]
	}
	return [3]float64{dot0 + dot1, sc0 + sc1, sum0 + sum1}
}

func (l *lanczos) passBChunks(lo, hi int) {
	b, c := l.b, l.a
	as, m := l.alpha*l.sb, l.shift
	for ch := lo; ch < hi; ch++ {
		v0, v1 := l.ln.chunkRange(ch)
		var n0, n1 float64
		i := v0
		for ; i+1 < v1; i += 2 {
			c0, c1 := c[i]-as*b[i]-m, c[i+1]-as*b[i+1]-m
			c[i], c[i+1] = c0, c1
			n0, n1 = n0+c0*c0, n1+c1*c1
		}
		if i < v1 {
			c0 := c[i] - as*b[i] - m
			c[i] = c0
			n0 += c0 * c0
		}
		l.parts[3*ch] = n0 + n1
	}
}

// bandDeltas returns the neighbours of every node as 16-bit offsets j − i, or nil if
// some offset does not fit.
func bandDeltas(g *Graph) []int16 {
	// Check first, so that a network without locality allocates nothing.
	for i := 0; i < g.Order(); i++ {
		for e := g.off[i]; e < g.off[i+1]; e++ {
			if dj := int(g.adj[e]) - i; dj < math.MinInt16 || dj > math.MaxInt16 {
				return nil
			}
		}
	}
	delta := make([]int16, len(g.adj))
	for i := 0; i < g.Order(); i++ {
		for e := g.off[i]; e < g.off[i+1]; e++ {
			delta[e] = int16(int(g.adj[e]) - i)
		}
	}
	return delta
}

func (ln *lazyNet) lanczosSpectrum(o SpectralOptions) (Spectrum, error) {
	return ln.lanczosRun(o, nil)
}

// lanczosRun is lanczosSpectrum with an extra exit: when abandon is not nil, the run also
// stops (with a nil error) at the first check at which abandon(lower) is true for the
// certified lower bound on λ_max (the step budget stops once τ(lower) alone exceeds
// DefaultMaxSteps).
func (ln *lazyNet) lanczosRun(o SpectralOptions, abandon func(lower float64) bool) (Spectrum, error) {
	par.Acquire() // held for the iteration, released before returning
	defer par.Release()
	n := ln.g.Order()
	if err := checkAlloc(fmt.Sprintf("Lanczos vectors of %d nodes", n), int64(n), lanczosNodeBytes); err != nil {
		return Spectrum{}, err
	}
	l := newLanczos(ln, o.Seed)
	var alpha, beta []float64 // beta[k] = β_{k+1} couples v_k and v_{k+1}
	var t tridiag
	gLo := float64(1-ln.d) / float64(ln.d+1) // Gershgorin: every eigenvalue of P is ≥ gLo
	ct := newCertifier(n, o.delta(), gLo)
	nextCheck := 8
	for k := 1; k <= o.MaxIter; k++ {
		a, b := l.step()
		alpha, beta = append(alpha, a), append(beta, b)
		// Breakdown: the Krylov space is invariant and the Ritz values are exact.
		breakdown := b <= 1e-12*(math.Abs(a)+1) || k >= n-1
		if k < nextCheck && !breakdown && k < o.MaxIter {
			continue
		}
		nextCheck = k + max(8, k/32)
		top, bot := t.extremes(alpha, beta[:k-1], b)
		if breakdown {
			top.bound, bot.bound = math.Min(top.bound, 1e-12), math.Min(bot.bound, 1e-12)
		}
		top.bound, bot.bound = top.bound+ritzRounding, bot.bound+ritzRounding
		if o.IntervalTol > 0 || abandon != nil {
			// The certified interval decides when to stop.
			c := ct.certify(alpha, beta, top.theta, bot.theta)
			if lanczosTrace != nil {
				lanczosTrace(k, top, bot, b)
			}
			if certTrace != nil {
				certTrace(k, c)
			}
			done := o.IntervalTol > 0 && c.upper < 1 && c.upper-c.lower <= o.IntervalTol*(1-c.upper)
			if abandon != nil && abandon(c.lower) {
				done = true
			}
			sp := c.spectrum(n, top.theta, bot.theta, k)
			if done {
				return sp, nil
			}
			if breakdown || k == o.MaxIter {
				return sp, fmt.Errorf("%w: Lanczos on %v bounded λ_max to [%.9g, %.9g] (IntervalTol %g) after %d iterations",
					ErrNotConverged, ln.g, c.lower, c.upper, o.IntervalTol, k)
			}
			continue
		}
		// An end whose absolute value is clearly below the other's does not set λ_max.
		topAcc, botAcc := top.bound <= o.tol(top.theta, top.bound), bot.bound <= o.tol(bot.theta, bot.bound)
		topDone := topAcc || top.theta+top.bound < -bot.theta-bot.bound
		botDone := botAcc || -bot.theta+bot.bound < top.theta-top.bound || -gLo < top.theta
		if lanczosTrace != nil {
			lanczosTrace(k, top, bot, b)
		}
		if topDone && botDone {
			// An end that stopped before its bound met the tolerance reports the bound
			// that holds whether or not its Ritz value has converged: λ_n ∈ [gLo,
			// θ_n] and λ_2 ∈ [θ_2, 1) (Rayleigh quotients and Gershgorin).
			if !topAcc {
				top.bound = math.Max(top.bound, 1-top.theta)
			}
			if !botAcc {
				bot.bound = math.Max(bot.bound, bot.theta-gLo+ritzRounding)
			}
		}
		final := (topDone && botDone) || breakdown || k == o.MaxIter
		if !final {
			continue
		}
		sp := newSpectrum(n, top.theta, bot.theta, top.bound, bot.bound, SpectralLanczos, k)
		c := ct.certify(alpha, beta, top.theta, bot.theta)
		if certTrace != nil {
			certTrace(k, c)
		}
		sp.Lower, sp.Upper, sp.Delta = c.lower, c.upper, ct.delta
		// The end that does not set λ_max was never resolved on purpose: its Ritz-gap
		// bound may be wrong (its Ritz value may sit on a neighbouring eigenvalue), so it
		// reports at least its certified bound.
		if top.theta >= -bot.theta {
			sp.BoundN = math.Max(sp.BoundN, bot.theta-c.loN)
		} else {
			sp.Bound2 = math.Max(sp.Bound2, c.up2-top.theta)
		}
		if topDone && botDone {
			return sp, nil
		}
		return sp, fmt.Errorf("%w: Lanczos on %v reached error bounds %.3g (λ_2) and %.3g (λ_n), tolerance %g, after %d iterations",
			ErrNotConverged, ln.g, top.bound, bot.bound, o.Tol, k)
	}
	panic("unreachable")
}

// certTrace, when set (by tests), sees every certified interval that the interval
// stopping rule (SpectralOptions.IntervalTol) decides on.
var certTrace func(k int, c certInterval)

// certifier computes the certified interval of λ_max from the Lanczos coefficients
// (docs/performance.md, "Certified λ_max"). Lanczos on P restricted to 1^⊥ (dimension
// m = n − 1) from b uniform on the unit sphere of 1^⊥, in exact arithmetic:
//
//   - Lower: every Ritz value is a Rayleigh quotient of a unit vector of 1^⊥, so θ_2 ≤
//     λ_2 and θ_n ≥ λ_n, and λ_max ≥ max(θ_2, −θ_n, 0) (λ_2 ≥ 0: the trace of P on 1^⊥
//     is ≥ 0). Deterministic.
//   - Upper: v_{k+1} = q_k(P)·b with q_k = χ_k/(β_1⋯β_k), χ_k the characteristic
//     polynomial of T_k, so ‖q_k(P)b‖ = 1 and, for a unit eigenvector u of λ_2 fixed in
//     advance, |u·b|·|q_k(λ_2)| ≤ 1. q_k is positive and increasing right of θ_2, so if
//     |u·b| ≥ t, λ_2 ≤ the point right of θ_2 where q_k = 1/t (van Dorsselaer,
//     Hochstenbach and van der Vorst 2000, the bound from the Lanczos polynomial);
//     likewise λ_n ≥ the point left of θ_n where |q_k| = 1/t, for a unit eigenvector of
//     λ_n, and λ_n ≥ (1−d)/(d+1) (Gershgorin) regardless. For b uniform on the sphere
//     of dimension m ≥ 2, P(|u·b| < t) ≤ t·√(2m/π) ≤ t·√(2n/π); t = (δ/2)/√(2n/π) for
//     each end makes the two ends' bounds hold together with probability ≥ 1 − δ over
//     the start. The event |u·b| ≥ t does not depend on k, so the bound holds at every
//     iteration at once and any data-dependent stopping rule keeps it.
//
// Floating point: the Ritz values and the polynomial are those of the computed T_k;
// the exact-arithmetic identities hold for it only up to rounding (Greenbaum 1989: the
// computed T_k is exact Lanczos for a matrix whose eigenvalues lie in small intervals
// around those of P). certRounding(k) is added to both ends; it is not a proved bound.
type certifier struct {
	n        int
	delta    float64
	logLimit float64 // log2(1/t)
	gLo      float64
}

// certInterval is a certified interval [lower, upper] of λ_max and its ingredients:
// up2 ≥ λ_2 and loN ≤ λ_n.
type certInterval struct {
	lower, upper, up2, loN float64
	delta                  float64
}

func newCertifier(n int, delta, gLo float64) *certifier {
	t := delta / 2 / math.Sqrt(2*float64(n)/math.Pi)
	return &certifier{n: n, delta: delta, logLimit: -math.Log2(t), gLo: gLo}
}

// certRounding is the allowance for rounding added to the certified bounds after k
// iterations: (8 + 2k) units in the last place of 1.
func certRounding(k int) float64 { return float64(8+2*k) * 0x1p-52 }

// certify returns the certified interval after k = len(alpha) iterations, with θ_2 =
// top and θ_n = bot the extreme Ritz values. It costs O(k) per bisection step, about
// 2·60·k operations.
func (c *certifier) certify(alpha, beta []float64, top, bot float64) certInterval {
	k := len(alpha)
	eta := certRounding(k)
	r := certInterval{delta: c.delta}
	// λ_2 ≤ up2: the point right of θ_2 where q_k reaches 1/t, at most 1.
	r.up2 = 1
	if polyExceeds(alpha, beta, 1, c.logLimit) {
		r.up2 = math.Min(1, c.crossing(alpha, beta, math.Min(top, 1), 1, true)+eta)
	}
	// λ_n ≥ loN: the point left of θ_n where |q_k| reaches 1/t, at least gLo.
	r.loN = c.gLo
	if polyExceeds(alpha, beta, c.gLo, c.logLimit) {
		r.loN = math.Max(c.gLo, c.crossing(alpha, beta, c.gLo, math.Max(bot, c.gLo), false)-eta)
	}
	r.upper = math.Min(1, math.Max(r.up2, -r.loN))
	r.lower = math.Max(0, math.Max(top, -bot)-eta)
	r.lower = math.Min(r.lower, r.upper)
	return r
}

// crossing bisects [lo, hi] for the point where |q_k| crosses 1/t: rising when |q_k|
// reaches 1/t at hi and not at lo (it returns the last hi, a point where it is reached),
// falling when the other way round (it returns the last lo). At most 80 halvings of
// polyExceeds, O(k) each.
func (c *certifier) crossing(alpha, beta []float64, lo, hi float64, rising bool) float64 {
	for it := 0; it < 80; it++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if polyExceeds(alpha, beta, mid, c.logLimit) == rising {
			hi = mid
		} else {
			lo = mid
		}
	}
	if rising {
		return hi
	}
	return lo
}

// spectrum returns the Lanczos spectrum whose bounds are the certified ones: Bound2 =
// up2 − θ_2 and BoundN = θ_n − loN.
func (r certInterval) spectrum(n int, top, bot float64, k int) Spectrum {
	sp := newSpectrum(n, top, bot, math.Max(0, r.up2-top), math.Max(0, bot-r.loN), SpectralLanczos, k)
	sp.Lower, sp.Upper, sp.Delta = r.lower, r.upper, r.delta
	return sp
}

// polyExceeds reports whether |q_k(x)| ≥ 2^logLimit, with q_k = χ_k/(β_1⋯β_k) the
// normalised Lanczos polynomial of the k = len(alpha) iterations: q_0 = 1 and
// β_j·q_j(x) = (x − α_j)·q_{j−1}(x) − β_{j−1}·q_{j−2}(x), the recurrence of the Lanczos
// vectors evaluated at the number x. The values are rescaled by powers of 2 so that
// they neither overflow nor underflow. A zero β (exact breakdown) makes |q_k| infinite
// at every x that is not a root: it reports true.
func polyExceeds(alpha, beta []float64, x, logLimit float64) bool {
	const big, scale, bits = 0x1p500, 0x1p-500, 500
	q2, q1, e := 0.0, 1.0, 0 // q_{j−2}, q_{j−1}, and the binary exponent they are scaled by
	for j, a := range alpha {
		bPrev := 0.0
		if j > 0 {
			bPrev = beta[j-1]
		}
		if beta[j] == 0 {
			return true
		}
		q := ((x-a)*q1 - bPrev*q2) / beta[j]
		q2, q1 = q1, q
		if math.Abs(q1) > big {
			q1, q2, e = q1*scale, q2*scale, e+bits
		}
	}
	if q1 == 0 {
		return false
	}
	return math.Log2(math.Abs(q1))+float64(e) >= logLimit
}

// lanczosTrace, when set (by tests, to trace convergence), sees every convergence check:
// the Ritz values and their bounds (rounding included) on which the check decides.
var lanczosTrace func(k int, top, bot ritz, beta float64)

// ritzRounding is added to the Lanczos error bounds for the rounding errors of the
// recurrence and of the tridiagonal eigenvalues (a few units in the last place of 1,
// as for the closed forms).
const ritzRounding = 8 * 0x1p-52

// tol returns the accuracy an end with Ritz value theta and bound must reach: Tol, or
// with GapTol the fraction GapTol of the smallest gap 1 − |θ| − bound it may have.
func (o *SpectralOptions) tol(theta, bound float64) float64 {
	if o.GapTol > 0 {
		return o.GapTol * (1 - math.Abs(theta) - bound)
	}
	return o.Tol
}

// ritz is an extreme eigenvalue of the Lanczos tridiagonal matrix with its error bound.
type ritz struct {
	theta, bound float64
}

// tridiag holds work space for the tridiagonal eigen-computations.
type tridiag struct {
	dl, d, du, y []float64
}

// extremes returns the largest and smallest eigenvalues θ of the k×k tridiagonal
// matrix T (diagonal alpha, off-diagonal beta) by Sturm-sequence bisection, with the
// bounds min(r, r²/gap): r = β_{k+1}·|y_k| is the residual norm of the Ritz vector
// (y, the eigenvector of T by inverse iteration) and gap the distance to the next
// eigenvalue of T.
func (t *tridiag) extremes(alpha, beta []float64, next float64) (top, bot ritz) {
	k := len(alpha)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := 0; i < k; i++ {
		r := 0.0
		if i > 0 {
			r += math.Abs(beta[i-1])
		}
		if i < k-1 {
			r += math.Abs(beta[i])
		}
		lo, hi = math.Min(lo, alpha[i]-r), math.Max(hi, alpha[i]+r)
	}
	eig := func(idx int) float64 { return bisectEigen(alpha, beta, idx, lo, hi) }
	top.theta, bot.theta = eig(k-1), eig(0)
	gapTop, gapBot := math.Inf(1), math.Inf(1)
	if k > 1 {
		gapTop, gapBot = top.theta-eig(k-2), eig(1)-bot.theta
	}
	top.bound = ritzBound(next*math.Abs(t.lastComponent(alpha, beta, top.theta)), gapTop)
	bot.bound = ritzBound(next*math.Abs(t.lastComponent(alpha, beta, bot.theta)), gapBot)
	return top, bot
}

// ritzBound returns the error bound of a Ritz value with residual norm r: r itself (some
// eigenvalue of P on 1^⊥ lies within r of the Ritz value), tightened to r²/gap only
// when there is a second Ritz value at a finite distance gap > r. With a single Ritz
// value (gap = +Inf) nothing is known about the rest of the spectrum, so the bound is r,
// never 0.
func ritzBound(r, gap float64) float64 {
	if math.IsNaN(r) {
		return math.Inf(1)
	}
	if !math.IsInf(gap, 1) && gap > r {
		return math.Min(r, r*r/gap)
	}
	return r
}

// sturmCount returns the number of eigenvalues of T below x.
func sturmCount(alpha, beta []float64, x float64) int {
	count, q := 0, 1.0
	for i, a := range alpha {
		if i == 0 {
			q = a - x
		} else {
			q = a - x - beta[i-1]*beta[i-1]/q
		}
		if q == 0 {
			q = -0x1p-1000
		}
		if q < 0 {
			count++
		}
	}
	return count
}

// bisectEigen returns the idx-th smallest eigenvalue of T in [lo, hi].
func bisectEigen(alpha, beta []float64, idx int, lo, hi float64) float64 {
	for it := 0; it < 200; it++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if sturmCount(alpha, beta, mid) > idx {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo + (hi-lo)/2
}

// lastComponent returns the last component of the unit eigenvector of T for the
// eigenvalue theta, by two steps of inverse iteration (gonum's Dgtsv).
func (t *tridiag) lastComponent(alpha, beta []float64, theta float64) float64 {
	k := len(alpha)
	if k == 1 {
		return 1
	}
	t.y = append(t.y[:0], make([]float64, k)...)
	for i := range t.y {
		t.y[i] = 1
	}
	shift := theta
	for it := 0; it < 2; it++ {
		for attempt := 0; ; attempt++ {
			t.dl = append(t.dl[:0], beta...)
			t.du = append(t.du[:0], beta...)
			t.d = append(t.d[:0], alpha...)
			for i := range t.d {
				t.d[i] -= shift
			}
			save := append([]float64(nil), t.y...)
			if (gonum.Implementation{}).Dgtsv(k, 1, t.dl, t.d, t.du, t.y, 1) {
				break
			}
			copy(t.y, save)
			shift += 1e-14 * (1 + math.Abs(theta)) * float64(attempt+1)
		}
		norm := 0.0
		for _, v := range t.y {
			norm += v * v
		}
		norm = math.Sqrt(norm)
		for i := range t.y {
			t.y[i] /= norm
		}
	}
	return t.y[k-1]
}

// HypercubeSpectrum returns the closed-form spectrum of the transition matrix of the
// d-dimensional hypercube (Hypercube(d)): the eigenvalues are (d+1−2j)/(d+1), j = 0..d,
// so λ_2 = (d−1)/(d+1), λ_n = −(d−1)/(d+1) and λ_max = (d−1)/(d+1) (Berenbrink et al.,
// section 4, use 1/(1 − λ_max) = Θ(log n)). It costs O(1) and rejects d outside 0..30.
func HypercubeSpectrum(d int) (Spectrum, error) {
	if d < 0 || d > 30 {
		return Spectrum{}, badParam("hypercube dimension must be in 0..30, got d = %d", d)
	}
	if d == 0 {
		return Spectrum{N: 1, Method: SpectralClosedForm}, nil
	}
	D := float64(d + 1)
	bound := 4 * 0x1p-52
	return exactSpectrum(1<<d, float64(d-1)/D, float64(1-d)/D, bound, bound, SpectralClosedForm), nil
}

// TorusSpectrum returns the closed-form spectrum of the transition matrix of the torus
// with the given sides (Torus(sides...); Ring(n) is Torus(n)). The torus is the
// Cartesian product of cycles, so the eigenvalues of P are (1 + Σ_i μ_i)/(d+1), with
// μ_i an adjacency eigenvalue of side i: 2cos(2πa/s) for s ≥ 3, ±1 for s = 2, 0 for
// s = 1. λ_2 takes the second-largest μ in the side where it loses least and λ_n the
// smallest μ in every side (−2 for even sides, −2cos(π/s) for odd ones). It costs
// O(r) and rejects what Torus rejects.
func TorusSpectrum(sides ...int) (Spectrum, error) {
	if len(sides) == 0 {
		return Spectrum{}, badParam("Torus needs at least one side length")
	}
	n, d := 1, 0
	loss := math.Inf(1) // smallest drop from the top adjacency eigenvalue in one side
	low := 1.0          // 1 + Σ smallest μ
	for i, s := range sides {
		if s < 1 {
			return Spectrum{}, badParam("Torus side %d has length %d < 1", i, s)
		}
		if n > (maxNodes-1)/s {
			return Spectrum{}, badParam("Torus%v has more than 2^31 nodes", sides)
		}
		n *= s
		switch {
		case s == 2:
			d++
			loss = math.Min(loss, 2)
			low--
		case s >= 3:
			d += 2
			loss = math.Min(loss, 2-2*math.Cos(2*math.Pi/float64(s)))
			if s%2 == 0 {
				low -= 2
			} else {
				low -= 2 * math.Cos(math.Pi/float64(s))
			}
		}
	}
	if n == 1 {
		return Spectrum{N: 1, Method: SpectralClosedForm}, nil
	}
	D := float64(d + 1)
	bound := 8 * 0x1p-52
	return exactSpectrum(n, 1-loss/D, low/D, bound, bound, SpectralClosedForm), nil
}

// BalancingTime returns τ(G, K), the number of rounds after which the continuous
// process of a network with n nodes and the given λ_max has discrepancy at most 1 from
// any start of discrepancy K: ⌈2/(1 − λ_max) · ln(K·n²)⌉ (Berenbrink et al., Theorem
// 2.2 with ε = 1, from Rabani, Sinclair and Wanka, Theorem 1). Table 1 reports every
// scheme's discrepancy after τ(G, K) rounds. It costs O(1) and rejects λ_max outside
// [0, 1), n < 1 and K < 1.
func BalancingTime(lambdaMax float64, n int, K int64) (int64, error) {
	switch {
	case !(lambdaMax >= 0 && lambdaMax < 1):
		return 0, badParam("λ_max %v is outside [0, 1)", lambdaMax)
	case n < 1:
		return 0, badParam("BalancingTime needs n ≥ 1 nodes, got %d", n)
	case K < 1:
		return 0, badParam("BalancingTime needs an initial discrepancy K ≥ 1, got %d", K)
	}
	t := math.Ceil(2 / (1 - lambdaMax) * (math.Log(float64(K)) + 2*math.Log(float64(n))))
	if t > math.MaxInt64/2 {
		return 0, badParam("τ = %g rounds overflows (λ_max = %v)", t, lambdaMax)
	}
	return int64(t), nil
}
