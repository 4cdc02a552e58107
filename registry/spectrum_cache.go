package registry

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"

	"github.com/tokendist/tokendist"
)

// maxCachedSpectra bounds the spectra a Registry keeps (oldest dropped first): a sweep
// visits its networks one after another, each for all its seeds and algorithms.
const maxCachedSpectra = 64

// spectrumCache holds LambdaMax results by network fingerprint, so that a sweep computes
// λ_max (for the stop rule tau and the lambda_max metric) once per network, not once per
// seed, algorithm and use. Concurrent requests for one network wait for one computation.
// The zero value is ready to use.
type spectrumCache struct {
	mu    sync.Mutex
	m     map[[sha256.Size]byte]*spectrumEntry
	order [][sha256.Size]byte // insertion order, for eviction
}

type spectrumEntry struct {
	once sync.Once
	sp   tokendist.Spectrum
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
	key := fingerprint(g)
	c := &r.spectra
	c.mu.Lock()
	if c.m == nil {
		c.m = map[[sha256.Size]byte]*spectrumEntry{}
	}
	e := c.m[key]
	if e == nil {
		e = &spectrumEntry{}
		c.m[key] = e
		c.order = append(c.order, key)
		if len(c.order) > maxCachedSpectra {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.mu.Unlock()
	e.once.Do(func() { e.sp, e.err = tokendist.LambdaMax(g, nil) })
	return e.sp, e.err
}
