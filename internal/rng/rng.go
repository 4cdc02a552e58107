// Package rng derives independent, reproducible random streams from a seed, so that a
// parallel step gives the same result for any number of workers: each fixed-size chunk
// of work draws from its own stream, keyed by (seed, step, chunk).
package rng

import "math/rand/v2"

// mix is SplitMix64's finaliser: a bijective 64-bit hash.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Key returns the two PCG seed words of the stream for (seed, step, chunk).
func Key(seed uint64, step int64, chunk int) (uint64, uint64) {
	a := mix(seed ^ mix(uint64(step)) ^ mix(mix(uint64(chunk))+1))
	return a, mix(a ^ 0x5851f42d4c957f2d)
}

// Reseed points p at the stream for (seed, step, chunk), without allocating.
func Reseed(p *rand.PCG, seed uint64, step int64, chunk int) {
	p.Seed(Key(seed, step, chunk))
}

// New returns a generator on the stream for (seed, step, chunk).
func New(seed uint64, step int64, chunk int) *rand.Rand {
	return rand.New(rand.NewPCG(Key(seed, step, chunk)))
}

// Mix is SplitMix64's finalizer: a bijection of uint64 whose outputs look independent
// for consecutive inputs. Counter-based streams (NodeKey, NodeWord) are built on it.
func Mix(z uint64) uint64 { return mix(z) }

// nodeDomain separates the node streams from the chunk and workload streams of a seed.
const nodeDomain = 0x6e6f64652d72616e // "node-ran"

// NodeKey returns the key of node id's counter-based stream of round for a run's seed
// (node.Random): its own domain, so never a chunk's or a workload's stream.
func NodeKey(seed uint64, round int64, id int) (a, b uint64) {
	return Key(mix(seed^nodeDomain), round, id)
}

// NodeWord returns word i of the node stream with key (a, b): two SplitMix64
// finalisers, no state.
func NodeWord(a, b, i uint64) uint64 { return mix(a ^ mix(b+i)) }
