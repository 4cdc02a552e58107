package handoff

import (
	"testing"

	"github.com/tokendist/tokendist/node"
)

// echoProgram sends its load on port 0 at Start, then every message it receives back on
// the same port.
type echoProgram struct{}

func (echoProgram) Start(c *node.Context) error {
	if c.Load == 0 {
		return nil
	}
	return c.Send(0, node.Message{Tokens: c.Load})
}
func (echoProgram) Receive(c *node.Context, port int, m node.Message) error {
	return c.Send(port, m)
}
func (echoProgram) Tick(*node.Context) error    { return nil }
func (echoProgram) Idle() bool                  { return true }
func (echoProgram) AppendState(b []byte) []byte { return b }
func (echoProgram) RestoreState([]byte) error   { return nil }

// BenchmarkHandoffRoundTrip: one token bounces between two nodes; each iteration is a
// data datagram delivered, its state persisted (copied) and acknowledged, and the ack
// consumed. It reports allocations per round trip (0 in the steady state).
func BenchmarkHandoffRoundTrip(b *testing.B) {
	a, _ := NewCountMachine(echoProgram{}, Config{ID: 0, Degree: 1}, 1)
	c, _ := NewCountMachine(echoProgram{}, Config{ID: 1, Degree: 1}, 0)
	_ = a.Start()
	_ = c.Start()
	var store []byte
	var wire, next []Datagram
	flush := func(n *CountMachine) {
		rd := mustReady(n)
		store = append(store[:0], rd.State...)
		next = append(next, rd.Datagrams...)
		n.Advance()
	}
	flush(c)
	flush(a)
	wire, next = append(wire, next...), next[:0]
	nodes := [2]*CountMachine{c, a}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		to := nodes[i%2]
		from := nodes[(i+1)%2]
		for _, d := range wire {
			if d.Kind == DatagramData {
				if err := to.Step(d); err != nil {
					b.Fatal(err)
				}
				flush(to)
			}
		}
		for _, d := range next {
			if d.Kind == DatagramAck {
				if err := from.Step(d); err != nil {
					b.Fatal(err)
				}
				flush(from)
			}
		}
		wire, next = append(wire[:0], next...), next[:0]
	}
}
