package registry

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"

	"github.com/tokendist/tokendist"
)

// maxCachedSpectra bounds the values a Registry keeps per kind (oldest dropped first): a
// sweep visits its networks one after another, each for all its seeds and algorithms.
const maxCachedSpectra = 64

// spectrumCache holds values derived from a network alone, by network fingerprint and
// kind: LambdaMax results, so that a sweep computes λ_max (for the stop rule tau and the
// lambda_max metric) once per network, not once per seed, algorithm and use, and
// peripheral nodes (the distance loads' source, an O(n·m) search). Concurrent requests
// for one value wait for one computation. The zero value is ready to use.
type spectrumCache struct {
	mu    sync.Mutex
	m     map[cacheKey]*spectrumEntry
	order map[string][]cacheKey // insertion order per kind, for eviction
}

type cacheKey struct {
	fp   [sha256.Size]byte
	kind string
}

type spectrumEntry struct {
	once sync.Once
	sp   tokendist.Spectrum
	node int
	err  error
}

// fingerprint returns the SHA-256 of g's order and adjacency lists in node order: two
// graphs with equal fingerprints have the same nodes and links, so the same spectrum.
// It costs O(n + m).
func fingerprint(g *tokendist.Graph) [sha256.Size]byte {
	h := sha256.New()
	buf := make([]byte, 0, 4096)
	n := g.Order()
	buf = binary.LittleEndian.AppendUint64(buf, uint64(n))
	for v := 0; v < n; v++ {
		nb := g.Neighbors(v)
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(nb)))
		for _, u := range nb {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(u))
			if len(buf) >= 4000 {
				h.Write(buf)
				buf = buf[:0]
			}
		}
	}
	h.Write(buf)
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// lambdaMax returns tokendist.LambdaMax(g, nil), computed once per distinct network
// while it stays among the last maxCachedSpectra networks asked for. LambdaMax is
// deterministic (Lanczos starts from a fixed vector), so a cached value equals a fresh
// one. It costs O(n + m) for the fingerprint when cached.
func (r *Registry) lambdaMax(g *tokendist.Graph) (tokendist.Spectrum, error) {
	if g == nil {
		return tokendist.LambdaMax(g, nil) // LambdaMax's own error for a nil network
	}
	e := r.spectra.entry(g, "lambda")
	e.once.Do(func() { e.sp, e.err = tokendist.LambdaMax(g, nil) })
	return e.sp, e.err
}

// peripheral returns tokendist.Peripheral(g), computed once per distinct network while
// it stays among the last maxCachedSpectra networks asked for (Peripheral is
// deterministic). It costs O(n + m) when cached, O(n·m) otherwise.
func (r *Registry) peripheral(g *tokendist.Graph) (int, error) {
	if g == nil {
		return tokendist.Peripheral(g)
	}
	e := r.spectra.entry(g, "peripheral")
	e.once.Do(func() { e.node, e.err = tokendist.Peripheral(g) })
	return e.node, e.err
}

// entry returns the cache entry of g's value of the kind, adding an empty one (and
// dropping the kind's oldest beyond maxCachedSpectra) if there is none.
func (c *spectrumCache) entry(g *tokendist.Graph, kind string) *spectrumEntry {
	key := cacheKey{fingerprint(g), kind}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m, c.order = map[cacheKey]*spectrumEntry{}, map[string][]cacheKey{}
	}
	e := c.m[key]
	if e == nil {
		e = &spectrumEntry{}
		c.m[key] = e
		c.order[kind] = append(c.order[kind], key)
		if o := c.order[kind]; len(o) > maxCachedSpectra {
			delete(c.m, o[0])
			c.order[kind] = o[1:]
		}
	}
	return e
}
