//go:build report

package tokendist

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// perfMeasured runs f k times; callgrind collects inside it only
// (--toggle-collect='*perfMeasured').
//
//go:noinline
func perfMeasured(f func(), k int) {
	for i := 0; i < k; i++ {
		f()
	}
}

// TestPerfDriverReference is the one workload of the callgrind driver that needs
// unexported code: builds of RandomRegular(10^6, 4) from seeds 0, 1, … by the
// pre-issue-15 implementation (refRandomRegular), TOKENDIST_PERF_ROUNDS rounds (default
// 2). The other workloads are the command internal/cmd/perfdriver.
//
//	go test -tags report -c -o /tmp/rr.test . && GODEBUG=asyncpreemptoff=1 TOKENDIST_PERF_ROUNDS=2 \
//	valgrind --tool=callgrind --toggle-collect='*perfMeasured' --cache-sim=yes \
//	--LL=1048576,16,64 /tmp/rr.test -test.run TestPerfDriverReference
func TestPerfDriverReference(t *testing.T) {
	k := 2
	if s := os.Getenv("TOKENDIST_PERF_ROUNDS"); s != "" {
		var err error
		k, err = strconv.Atoi(s)
		require.NoError(t, err, "TOKENDIST_PERF_ROUNDS")
	}
	must := func(err error) {
		require.NoError(t, err)
	}
	seed := uint64(0)
	perfMeasured(func() { _, err := refRandomRegular(1_000_000, 4, seed); must(err); seed++ }, k)
}
