package tokendist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist/internal/apigen"
)

// TestAPISurface guards the exported API (the Go project's api/go1.txt discipline): a
// name removed or a signature changed fails outright; a name added fails until it is
// recorded in api/ with `go run ./internal/apigen/cmd -w` (and in CHANGELOG.md).
func TestAPISurface(t *testing.T) {
	removed, added, err := apigen.Diff(".")
	require.NoError(t, err)
	// One check with both lists, so that a change shows everything it moved at once.
	require.Empty(t, append(removed, added...),
		"%d exported names removed or changed (v1 changes are additive):\n%s\n%d exported names added but not recorded; run `go run ./internal/apigen/cmd -w` and add a CHANGELOG.md line:\n%s",
		len(removed), strings.Join(removed, "\n"), len(added), strings.Join(added, "\n"))
}
