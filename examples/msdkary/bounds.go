package main

import "math/big"

// msdUpper is Lemma 17 of Houle, Symvonis and Wood (section 4.5), an upper bound on
// MSD(T_{h,k}): min{(k−1)h + 1, ⌊(k+2)(h+1)/2⌋}.
func msdUpper(k, h int) int {
	if h == 0 {
		return 0
	}
	return min((k-1)*h+1, (k+2)*(h+1)/2)
}

// msdLower is the counting (sphere-covering) lower bound of docs/proofs/msd-kary.md,
// Proposition 3: a residue of Z_n at distance ≤ R from 0 is the image of some
// c ∈ Z^h with Σ|c_j| ≤ R, and there are B_h(R) = Σ_i 2^i·C(h,i)·C(R,i) of those, so
// MSD(T_{h,k}) ≥ min{R : B_h(R) ≥ n} with n = (k^(h+1) − 1)/(k − 1).
func msdLower(k, h int) int {
	n := new(big.Int)
	pow := big.NewInt(1)
	for i := 0; i <= h; i++ {
		n.Add(n, pow)
		pow.Mul(pow, big.NewInt(int64(k)))
	}
	for R := 0; ; R++ {
		if ballSize(h, R).Cmp(n) >= 0 {
			return R
		}
	}
}

// ballSize is the number of points of Z^h with ℓ1 norm ≤ R.
func ballSize(h, R int) *big.Int {
	sum := new(big.Int)
	for i := 0; i <= min(h, R); i++ {
		t := new(big.Int).Binomial(int64(h), int64(i))
		t.Mul(t, new(big.Int).Binomial(int64(R), int64(i)))
		t.Lsh(t, uint(i))
		sum.Add(sum, t)
	}
	return sum
}
