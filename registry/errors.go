package registry

import (
	"fmt"

	"github.com/tokendist/tokendist/internal/errs"
)

// The sentinel errors of the registry, for errors.Is. Every error the registry returns
// starts with "tokendist: " once, then says where it arose (the entry, as in
// "tokendist: network ring: bad parameter: ..."), names the bad value, and wraps the
// sentinel of its cause: one of these, one of the root package (tokendist.ErrBadParameter
// for a bad parameter, a bad value or a bad spec) or the error of the constructor, the
// operating system or the context that caused it.
var (
	// ErrNotApplicable is returned (wrapped) by a metric that does not apply to a run (a
	// ring statistic of a non-ring balancer, an optimum defined on trees only);
	// Registry.Run then leaves the metric out of Result.Metrics instead of failing the
	// run.
	ErrNotApplicable = fmt.Errorf("%smetric not applicable", errs.Prefix)
	// ErrUnknownName reports a name that no registry entry of its kind has. An unknown
	// name is a bad parameter, so it also matches tokendist.ErrBadParameter.
	ErrUnknownName = fmt.Errorf("%w: unknown name", errs.ErrBadParameter)
)

// wrapf returns nil for a nil err, else "tokendist: <format>: <err's message without its
// own prefix>", wrapping err: the prefix comes first, once, whatever err's message.
func wrapf(err error, format string, args ...any) error { return errs.Wrapf(err, format, args...) }
