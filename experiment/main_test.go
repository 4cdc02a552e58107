package experiment

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/registry"
)

// TestMain runs the tests, or, with TOKENDIST_EXP_MAIN=1, acts as the tokendist command
// (Main with os.Args[1:]) so that the fault tests can run it as a child process under a
// file-size limit (TOKENDIST_EXP_FSIZE bytes, RLIMIT_FSIZE) or with the registry of a
// blocking algorithm (TOKENDIST_EXP_REG=blocking).
func TestMain(m *testing.M) {
	if os.Getenv("TOKENDIST_EXP_MAIN") == "1" {
		if n, err := strconv.ParseUint(os.Getenv("TOKENDIST_EXP_FSIZE"), 10, 64); err == nil {
			lim := syscall.Rlimit{Cur: n, Max: n}
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
				os.Stderr.WriteString("setrlimit: " + err.Error() + "\n")
				os.Exit(3)
			}
		}
		reg := registry.Default()
		if os.Getenv("TOKENDIST_EXP_REG") == "blocking" {
			reg = blockingRegistry()
		}
		os.Exit(Main(reg, os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// blockingRegistry has the algorithm "blocking": RSW diffusion whose Step blocks
// forever, ignoring cancellation, at its third step when the seed is odd.
func blockingRegistry() *registry.Registry {
	reg := registry.New()
	c, _ := reg.Constructor(registry.KindAlgorithm, "rsw-diffusion")
	inner := c.(registry.AlgorithmFunc)
	err := reg.RegisterAlgorithm(registry.Entry{Name: "blocking"}, func(g *tokendist.Graph, l tokendist.Loads, p registry.Params) (tokendist.Balancer, error) {
		b, err := inner(g, l, p)
		return &blockingBalancer{Balancer: b}, err
	})
	if err != nil {
		panic(err)
	}
	return reg
}

type blockingBalancer struct {
	tokendist.Balancer
	steps int
}

func (b *blockingBalancer) Init(s *tokendist.State) error {
	b.steps = 0
	if in, ok := b.Balancer.(tokendist.Initializer); ok {
		return in.Init(s)
	}
	return nil
}

func (b *blockingBalancer) Step(s *tokendist.State) error {
	if b.steps++; b.steps == 3 && s.Seed%2 == 1 {
		select {} // blocks forever, ignoring cancellation
	}
	return b.Balancer.Step(s)
}
