package tokendist

// ringBoundMaxTasks bounds the number of tasks RingScheduleLowerBound accepts, so that its
// capacity sums cannot overflow.
const ringBoundMaxTasks = 1 << 53

// RingScheduleLowerBound returns a lower bound on the completion time of every schedule of
// a dag with levels[l] tasks of level l (the root alone at level 0, on PE 0) on the ring
// R_p, in the model of Gao and Rosenberg's section 1.3: one task per PE per step, a task
// executes at least one step after its parent, and a task crosses at most one link per
// step, so a task executed on a PE at ring distance k from PE 0 runs at step k or later.
// It is the least T such that, for every level L, the tasks of level ≥ L fit into the
// PE-steps t < T with t ≥ L on a PE at distance k ≤ t: Σ_k c_k·(T − max(L, k))⁺ ≥ the
// number of tasks of level ≥ L, where c_k is the number of PEs at distance k. With L = 0
// and L = len(levels)−1 it contains the simpler bound max(⌈N/p⌉, depth) and adds the
// ring's start-up, which dominates on shallow dags and large rings. No policy of this
// library (and no other schedule) is faster; RingStats.RingLowerBound holds its value
// for a run. It is a lower bound, not the optimum: an optimal schedule may be slower.
//
// It needs p ≥ 1, every levels[l] ≥ 0 and at most 2^53 tasks in all; it returns 0 for
// no tasks. It costs O(len(levels)·p·log N).
func RingScheduleLowerBound(p int, levels []int64) (int64, error) {
	if p < 1 {
		return 0, badParam("RingScheduleLowerBound needs p ≥ 1 PEs, got p = %d", p)
	}
	var total int64
	for l, x := range levels {
		if x < 0 {
			return 0, badParam("RingScheduleLowerBound needs levels[l] ≥ 0, got levels[%d] = %d", l, x)
		}
		if x > ringBoundMaxTasks-total {
			return 0, badParam("RingScheduleLowerBound needs at most 2^53 tasks, got more by level %d", l)
		}
		total += x
	}
	// c[k] = number of PEs at ring distance k from PE 0.
	kmax := p / 2
	c := make([]int64, kmax+1)
	for q := 0; q < p; q++ {
		c[min(q, p-q)]++
	}
	var bound, suffix int64
	for L := len(levels) - 1; L >= 0; L-- {
		suffix += levels[L]
		if suffix == 0 {
			continue
		}
		// The least T ≥ L+1 with capacity ≥ suffix; PE 0 alone reaches it by L + suffix.
		lo, hi := int64(L)+1, int64(L)+suffix
		if hi <= bound {
			continue // an earlier (deeper) level already forces at least this much
		}
		lo = max(lo, bound)
		for lo < hi {
			mid := lo + (hi-lo)/2
			if ringCapacity(c, mid, int64(L), suffix) >= suffix {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		bound = max(bound, lo)
	}
	return bound, nil
}

// ringCapacity returns Σ_k c[k]·(T − max(L, k))⁺, or any value ≥ need once it reaches need.
func ringCapacity(c []int64, T, L, need int64) int64 {
	var s int64
	for k, ck := range c {
		start := max(L, int64(k))
		if start >= T {
			break // k only grows
		}
		s += ck * (T - start)
		if s >= need {
			return s
		}
	}
	return s
}
