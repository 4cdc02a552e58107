package tokendist_test

import (
	"os"
	"strings"
	"testing"
)

func TestZZDump(t *testing.T) {
	for name, svg := range renderCases(t) {
		os.WriteFile("/tmp/plots/after/"+strings.NewReplacer(" ", "_", ",", "").Replace(name)+".svg", svg, 0o644)
	}
}
