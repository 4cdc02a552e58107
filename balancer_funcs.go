package tokendist

import "fmt"

// Funcs adapts plain functions to a Balancer that implements the optional interfaces
// Initializer, Terminator, Periodic, InvariantKeeper, Accountant, Reporter and
// fmt.Stringer. It exists for notebooks: gophernotes (gomacro) hands compiled code a
// proxy of a notebook-defined type that only has the methods of the interface it was
// converted to, so Run would never see a notebook balancer's Init, Done or Period. Build
// a Funcs from the notebook's functions instead. Nil fields mean: no set-up, no
// termination rule (Run treats a Funcs without DoneFunc as having no rule, so a
// PeriodFunc's stability check applies), no stability period. Step before Init returns
// an error wrapping ErrNotInitialized, as for every built-in balancer. Its methods cost
// what the functions cost.
//
// Dynamic runs: Funcs accepts a Workload and Churn; StepFunc sees them in State
// (State.Workload, State.Live) and should honour State.Live itself. With
// ExpectedTotalFunc, Run checks ExpectedTotal + arrivals − completions.
type Funcs struct {
	// Name names the balancer in results and errors ("Funcs" if empty).
	Name string
	// StepFunc performs one step; it is required.
	StepFunc func(s *State) error
	// InitFunc, if set, is called once per run before the first step.
	InitFunc func(s *State) error
	// DoneFunc, if set, is the balancer's own termination rule; nil means no rule.
	DoneFunc func(s *State) bool
	// PeriodFunc, if set, returns the stability period in steps.
	PeriodFunc func(s *State) int64
	// MayGoNegative declares that loads may become negative (Run counts them).
	MayGoNegative bool
	// ExpectedTotalFunc, if set, declares that the total changes by design and returns
	// the total Run should find.
	ExpectedTotalFunc func(s *State) int64
	// ReportFunc, if set, returns the run's report (Reporter): Run stores it in
	// Result.Report.
	ReportFunc func(s *State) any

	ready initGuard
}

var (
	_ Balancer        = (*Funcs)(nil)
	_ Initializer     = (*Funcs)(nil)
	_ Terminator      = (*Funcs)(nil)
	_ Periodic        = (*Funcs)(nil)
	_ InvariantKeeper = (*Funcs)(nil)
	_ Accountant      = (*Funcs)(nil)
	_ Reporter        = (*Funcs)(nil)
	_ fmt.Stringer    = (*Funcs)(nil)
	_ ruleHolder      = (*Funcs)(nil)
)

// String returns f.Name.
func (f *Funcs) String() string {
	if f.Name == "" {
		return "Funcs"
	}
	return f.Name
}

// Step calls StepFunc. Before Init it returns an error wrapping ErrNotInitialized.
func (f *Funcs) Step(s *State) error {
	if f == nil {
		return nilReceiver("Funcs", "Step")
	}
	if f.StepFunc == nil {
		return badParam("Funcs %q has no StepFunc", f.String())
	}
	if err := f.ready.check(s, f); err != nil {
		return err
	}
	return f.StepFunc(s)
}

// Init calls InitFunc if set.
func (f *Funcs) Init(s *State) error {
	if f == nil {
		return nilReceiver("Funcs", "Init")
	}
	f.ready.reset()
	if f.StepFunc == nil {
		return badParam("Funcs %q has no StepFunc", f.String())
	}
	if f.InitFunc != nil {
		if err := f.InitFunc(s); err != nil {
			return err
		}
	}
	f.ready.set(s)
	return nil
}

// Done calls DoneFunc if set.
func (f *Funcs) Done(s *State) bool { return f.DoneFunc != nil && f.DoneFunc(s) }

// hasRule reports whether DoneFunc is set (ruleHolder): without it, f has no
// termination rule and Run applies the stability check to a PeriodFunc.
func (f *Funcs) hasRule() bool { return f.DoneFunc != nil }

// Period calls PeriodFunc if set, else returns 0 (no stability check).
func (f *Funcs) Period(s *State) int64 {
	if f.PeriodFunc == nil {
		return 0
	}
	return f.PeriodFunc(s)
}

// Invariants reports the invariants f declares.
func (f *Funcs) Invariants() Invariant {
	inv := Conserves | NonNegative
	if f.MayGoNegative {
		inv &^= NonNegative
	}
	if f.ExpectedTotalFunc != nil {
		inv &^= Conserves
	}
	return inv
}

// ExpectedTotal calls ExpectedTotalFunc; Run asks only when it is set.
func (f *Funcs) ExpectedTotal(s *State) int64 {
	if f.ExpectedTotalFunc == nil {
		return s.Loads.Total()
	}
	return f.ExpectedTotalFunc(s)
}

// Report calls ReportFunc, or returns nil when it is not set.
func (f *Funcs) Report(s *State) any {
	if f.ReportFunc == nil {
		return nil
	}
	return f.ReportFunc(s)
}
