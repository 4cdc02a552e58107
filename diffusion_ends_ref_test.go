package tokendist

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/internal/rng"
)

// referenceEndsRound is a straightforward scatter implementation of one round of
// RandomizedDiffusion with d+1 > 64 slots (the rdEnds format), written from the
// documented order of the draws rather than from the fast pass: chunk c draws from
// its own stream (rng.Reseed(Seed, Steps, c)); its nodes are taken in order, and a run
// of consecutive nodes that draw their links alone with ranges D, D−1, …, D−deg+1
// multiplying to at most digitLimit shares one word (begin of the product of the
// ranges of those with excess, at most rdBatch nodes, none drawn when no node has
// excess), each node with excess taking one digit per link (selection sampling: link p
// gets a token when its digit is below the tokens still to place); any other node
// draws alone, all D slots by Floyd's algorithm (floydWords) when rdDrawsAll, else its
// links by selectSlots. It returns the next loads, Moved and Messages of the round.
func referenceEndsRound(t *testing.T, b *RandomizedDiffusion, s *State) (Loads, int64, int64) {
	g := b.ln.g
	D := b.slots
	require.Greater(t, D, uint64(64), "reference for d+1 > 64")
	next := make(Loads, g.Order())
	var moved, msgs int64
	send := func(k int, q, r uint64, mask []uint64) {
		deg := g.Degree(k)
		var sent uint64
		for p, nb := range g.Neighbors(k) {
			x := q + mask[p>>6]>>(p&63)&1
			sent += x - q
			next[nb] += int64(x)
			moved += int64(x)
			if x > 0 {
				msgs++
			}
		}
		next[k] += int64(q*D + r - uint64(deg)*q - sent)
	}
	for c := 0; c < b.ln.chunks(); c++ {
		var st digits
		rng.Reseed(&st.src, s.Seed, s.Steps, c)
		v0, v1 := b.ln.chunkRange(c)
		for k := v0; k < v1; {
			prod, j := uint64(1), k
			for ; j < v1 && j-k < rdBatch; j++ {
				deg := uint64(g.Degree(j))
				p, e := selectBatch(D, 0, deg)
				if rdDrawsAll(D, deg) || e != deg {
					break
				}
				if uint64(s.Loads[j])%D > 0 {
					hi, lo := bits.Mul64(prod, p)
					if hi != 0 || lo > digitLimit {
						break
					}
					prod = lo
				}
			}
			if j == k { // alone
				x := uint64(s.Loads[k])
				q, r := x/D, x%D
				deg := uint64(g.Degree(k))
				mask := make([]uint64, (D+63)/64)
				if rdDrawsAll(D, deg) {
					floydWords(&st, D, r, mask)
				} else {
					selectSlots(&st, D, deg, r, mask)
				}
				send(k, q, r, mask)
				k++
				continue
			}
			if prod > 1 {
				st.begin(prod)
			}
			for i := k; i < j; i++ {
				x := uint64(s.Loads[i])
				q, r := x/D, x%D
				deg := uint64(g.Degree(i))
				mask := make([]uint64, (deg+63)/64)
				need := r
				for p := uint64(0); r > 0 && p < deg; p++ {
					if st.next(D-p) < need {
						mask[p>>6] |= 1 << (p & 63)
						need--
					}
				}
				send(i, q, r, mask)
			}
			k = j
		}
	}
	return next, moved, msgs
}

// TestRandomizedEndsMatchesReference compares rounds of the ends formats (d+1 > 64:
// Barabási–Albert networks and a star; shares in 8, 16, 32 and 64 bits, chosen by the
// spread of the loads) with referenceEndsRound, for several seeds, load spreads (all
// below d+1, small remainders, large ones) and worker counts, and with a load changed
// between rounds outside Step (which must widen the format).
func TestRandomizedEndsMatchesReference(t *testing.T) {
	t.Parallel()
	nets := map[string]func() (*Graph, error){
		"BA(6000,2)": func() (*Graph, error) { return barabasiAlbert(6000, 2, 4) },
		"BA(3000,1)": func() (*Graph, error) { return barabasiAlbert(3000, 1, 5) },
		"BA(2000,5)": func() (*Graph, error) { return barabasiAlbert(2000, 5, 6) },
		"Star(300)":  func() (*Graph, error) { return Star(300) },
	}
	seen := map[rdFormat]bool{}
	for name, mk := range nets {
		g, err := mk()
		require.NoError(t, err)
		b, err := NewRandomizedDiffusion(g)
		require.NoError(t, err)
		require.Greater(t, b.slots, uint64(64), name)
		D := int64(b.slots)
		for li, hi := range []int64{D - 1, 3 * D, 1000, 1 << 20, 1 << 30, 1 << 50} {
			loads, err := RandomRange(g.Order(), 0, hi, uint64(li+1))
			require.NoError(t, err)
			for _, workers := range []int{1, 2} {
				for _, seed := range []uint64{1, 99} {
					s := &State{Net: g, Loads: loads.Clone(), Workers: workers, Seed: seed}
					require.NoError(t, b.Init(s))
					for step := 0; step < 3; step++ {
						if step == 2 { // loads changed outside Step (a workload): the extremes are stale
							s.Loads[g.Order()-1] += 1 << 33
						}
						ref, moved, msgs := referenceEndsRound(t, b, s)
						m0, g0 := s.Moved, s.Messages
						require.NoError(t, b.Step(s))
						require.Contains(t, []rdFormat{rdEnds, rdEnds8, rdEnds16, rdEnds32}, b.format)
						seen[b.format] = true
						require.Equal(t, moved, s.Moved-m0, "%s moved", name)
						require.Equal(t, msgs, s.Messages-g0, "%s messages", name)
						require.Equal(t, ref, s.Loads, "%s loads %d seed %d step %d", name, hi, seed, step)
						s.Steps++
					}
				}
			}
		}
	}
	require.Len(t, seen, 4, "every ends format exercised")
}

// TestRandomizedHashes prints a hash of the final loads of RandomizedDiffusion runs on
// many networks and seeds, NodeStreams on and off, when TOKENDIST_RD_HASHES is set:
// run it on two commits and compare the output to check that results are unchanged.
func TestRandomizedHashes(t *testing.T) {
	if os.Getenv("TOKENDIST_RD_HASHES") == "" {
		t.Skip("TOKENDIST_RD_HASHES not set")
	}
	nets := map[string]func() (*Graph, error){
		"BA(20000,2)":    func() (*Graph, error) { return barabasiAlbert(20000, 2, 1) },
		"BA(5000,1)":     func() (*Graph, error) { return barabasiAlbert(5000, 1, 2) },
		"BA(5000,8)":     func() (*Graph, error) { return barabasiAlbert(5000, 8, 3) },
		"RR(20000,4)":    func() (*Graph, error) { return RandomRegular(20000, 4, 1) },
		"RR(5000,16)":    func() (*Graph, error) { return RandomRegular(5000, 16, 1) },
		"ER(5000,16)":    func() (*Graph, error) { return erdosRenyi(5000, 16/4999.0, 1) },
		"Torus(100,100)": func() (*Graph, error) { return Torus(100, 100) },
		"Star(200)":      func() (*Graph, error) { return Star(200) },
	}
	for _, name := range []string{"BA(20000,2)", "BA(5000,1)", "BA(5000,8)", "RR(20000,4)", "RR(5000,16)", "ER(5000,16)", "Torus(100,100)", "Star(200)"} {
		g, err := nets[name]()
		require.NoError(t, err)
		for _, ns := range []bool{false, true} {
			h := fnv.New64a()
			for seed := uint64(1); seed <= 8; seed++ {
				b, err := NewRandomizedDiffusion(g)
				require.NoError(t, err)
				loads, err := RandomRange(g.Order(), 0, int64(seed)*300, seed)
				require.NoError(t, err)
				s := &State{Net: g, Loads: loads, Workers: 2, Seed: seed, NodeStreams: ns}
				require.NoError(t, b.Init(s))
				for step := 0; step < 20; step++ {
					require.NoError(t, b.Step(s))
					s.Steps++
				}
				fmt.Fprint(h, s.Loads, s.Moved, s.Messages)
			}
			fmt.Printf("HASH %s nodestreams=%v %x\n", name, ns, h.Sum64())
		}
	}
}
