package tokendist

import (
	"encoding/json"
	"errors"

	"github.com/tokendist/tokendist/internal/errs"
)

// The sentinel errors of the module, for errors.Is. Every error that any package of the
// module returns starts with "tokendist: ", names the bad value, and wraps one of these
// (or the error of the user's code, the context or the operating system that caused it).
// The registry, plot and experiment packages return the same sentinels: an unknown
// parameter of a registry spec matches ErrBadParameter like one of NewGraph.
//
// One rule for invalid input holds everywhere: a function that can be given a bad value
// returns an error; none returns -1, a zero or a saturated value for it, and none panics.
var (
	// ErrBadParameter reports a parameter out of range (negative size, k < 1, an
	// unknown name, a node that is not in the network).
	ErrBadParameter = errs.ErrBadParameter
	// ErrBadLoads reports a load vector that Run or a distribution cannot accept (wrong
	// length, a negative load, a total that overflows int64).
	ErrBadLoads = errs.ErrBadLoads
	// ErrNilNetwork reports a nil network.
	ErrNilNetwork = errs.ErrNilNetwork
	// ErrNilBalancer reports a nil balancer.
	ErrNilBalancer = errs.ErrNilBalancer
	// ErrNotConnected reports a disconnected network where connectivity is needed.
	ErrNotConnected = errs.ErrNotConnected
	// ErrNotTree reports a network that is not a tree where a tree is needed (a
	// spanning tree of it can be balanced instead: NewSpanningTree).
	ErrNotTree = errs.ErrNotTree
	// ErrInvalidColoring reports an edge colouring that is not proper or does not
	// belong to the graph.
	ErrInvalidColoring = errs.ErrInvalidColoring
	// ErrOverflow reports an integer result (a bound, a closed form, a total or a
	// counter) that does not fit in its type. Functions return it, wrapped with the
	// operands, instead of a wrapped-around value.
	ErrOverflow = errs.ErrOverflow
	// ErrTooLarge reports a call that would allocate more than the memory budget (see
	// the package documentation, "Memory"). The error names the size that was refused.
	ErrTooLarge = errs.ErrTooLarge
	// ErrNotConverged reports an iterative method that did not reach its tolerance
	// within its iteration budget.
	ErrNotConverged = errs.ErrNotConverged
	// ErrDeadlock reports a perfect-tree run in which every unfinished node waits for a
	// message that will never come. The corrected program never deadlocks; the literal
	// one may.
	ErrDeadlock = errs.ErrDeadlock
	// ErrProtocol reports a perfect-tree node program that reached a state the paper
	// rules out (a message of the wrong kind, no subtree able to take a phase-3 token).
	ErrProtocol = errs.ErrProtocol
	// ErrBadDag reports a growth rule that contradicts the dag model of Gao and
	// Rosenberg, section 1.3: a grid node that waits forever for its second parent, or a
	// tree deeper than TreeMaxLevel.
	ErrBadDag = errs.ErrBadDag
	// ErrTaskBudget reports a growing dag that created more tasks than
	// RingOptions.MaxTasks allows: a growth rule that does not stop, or a budget set too
	// low.
	ErrTaskBudget = errs.ErrTaskBudget
	// ErrConcurrentUse reports a balancer value handed to a second run while a first
	// run still uses it. A balancer value serves one run at a time; build one per
	// goroutine.
	ErrConcurrentUse = errs.ErrConcurrentUse
	// ErrNotInitialized reports a Step called on a built-in balancer whose Init has not
	// prepared the State: Init has not run, or ran for another network or load count.
	// Call Run, or Init before Step.
	ErrNotInitialized = errs.ErrNotInitialized
)

// wrapf returns nil for a nil err, else "tokendist: <format>: <err's message without
// its own prefix>", wrapping err.
func wrapf(err error, format string, args ...any) error { return errs.Wrapf(err, format, args...) }

// jsonErr prefixes a decoding error of what, naming the field and the JSON type for a
// type error.
func jsonErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return badParam("%s JSON: field %s at offset %d: a JSON %s cannot be a %v", what, quote([]byte(te.Field)), te.Offset, te.Value, te.Type)
	}
	return wrapf(err, "%s JSON", what)
}

// quote returns at most the first 48 bytes of b, quoted (≤ 200 bytes of text), for an
// error message.
func quote(b []byte) string { return errs.Quote(b) }
