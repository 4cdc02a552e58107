package registry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
)

// Kind names a family of registry entries.
type Kind string

// The kinds of registry entries. KindWorkload and KindChurn are reserved for the
// workloads and link churn of dynamic runs; the registry lists and resolves them like the
// others once registered.
const (
	KindNetwork   Kind = "network"
	KindLoads     Kind = "loads"
	KindAlgorithm Kind = "algorithm"
	KindMetric    Kind = "metric"
	KindWorkload  Kind = "workload"
	KindChurn     Kind = "churn"
)

// ParamType is the type of a registry parameter.
type ParamType uint8

// The parameter types. Values are stored in Params as int64, float64, string, bool and
// []int64 respectively.
const (
	ParamInt ParamType = iota + 1
	ParamFloat
	ParamString
	ParamBool
	ParamInts
)

var paramTypeNames = [...]string{"", "int", "float", "string", "bool", "list of ints"}

// String names the type.
func (t ParamType) String() string {
	if int(t) >= len(paramTypeNames) || t == 0 {
		return fmt.Sprintf("ParamType(%d)", int(t))
	}
	return paramTypeNames[t]
}

// Param describes one parameter of a registry entry.
type Param struct {
	// Name is the key in files and Params.
	Name string `json:"name"`
	// Type is the value's type.
	Type ParamType `json:"type"`
	// Default is the value when the key is absent, of the Go type Type stores; nil
	// makes the parameter required.
	Default any `json:"default,omitempty"`
	// Doc says what the parameter does, in one line.
	Doc string `json:"doc"`
	// Allowed lists the accepted values of a ParamString parameter (empty: any).
	Allowed []string `json:"allowed,omitempty"`
}

// Convert returns v as the Go type p.Type stores (int64, float64, string, bool or
// []int64), accepting any Go integer for an int, an integer or a float for a float, an
// integral float64 for an int (as JSON decodes numbers), and a single int or a []any of
// ints for a list. It rejects a value of another type, or a string outside Allowed,
// with an error naming the parameter and the allowed values. It costs O(len(v)).
func (p Param) Convert(v any) (any, error) {
	bad := func() (any, error) {
		msg := fmt.Sprintf("tokendist: parameter %s: want %s, got %s", p.Name, p.Type, describe(v))
		if len(p.Allowed) > 0 {
			msg += " (allowed: " + strings.Join(p.Allowed, ", ") + ")"
		}
		return nil, errs.BadParam("%s", strings.TrimPrefix(msg, "tokendist: "))
	}
	switch p.Type {
	case ParamInt:
		if i, ok := toInt(v); ok {
			return i, nil
		}
	case ParamFloat:
		if i, ok := toInt(v); ok {
			return float64(i), nil
		}
		f, ok := v.(float64)
		if f32, is32 := v.(float32); is32 {
			f, ok = float64(f32), true
		}
		if ok && !math.IsNaN(f) && !math.IsInf(f, 0) { // a float32 NaN or ±Inf as a float64's
			return f, nil
		}
	case ParamString:
		if s, ok := v.(string); ok {
			if len(p.Allowed) > 0 && !contains(p.Allowed, s) {
				return bad()
			}
			return s, nil
		}
	case ParamBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case ParamInts:
		if i, ok := toInt(v); ok {
			return []int64{i}, nil
		}
		switch l := v.(type) {
		case []int64:
			return append([]int64(nil), l...), nil
		case []int:
			out := make([]int64, len(l))
			for i, x := range l {
				out[i] = int64(x)
			}
			return out, nil
		case []any:
			out := make([]int64, len(l))
			for i, x := range l {
				xi, ok := toInt(x)
				if !ok {
					return bad()
				}
				out[i] = xi
			}
			return out, nil
		}
	}
	return bad()
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return errs.Quote([]byte(x))
	case []any:
		return "list " + errs.Quote([]byte(fmt.Sprint(v)))
	case map[string]any:
		return "a mapping"
	}
	return errs.Quote([]byte(fmt.Sprint(v))) + fmt.Sprintf(" (%T)", v)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		if uint64(x) <= math.MaxInt64 {
			return int64(x), true
		}
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

// Params holds the parameter values of one registry entry, keyed by name, as the Go
// types of ParamType (int64, float64, string, bool, []int64). Entry.Resolve builds it
// with every default filled in; the getters fail with an error naming the key.
type Params map[string]any

func (p Params) get(key string) (any, error) {
	v, ok := p[key]
	if !ok {
		return nil, errs.BadParam("missing parameter %s", key)
	}
	return v, nil
}

// Int returns the int parameter key; it fails if key is absent, not an integer or
// outside the range of int.
func (p Params) Int(key string) (int, error) {
	v, err := p.get(key)
	if err != nil {
		return 0, err
	}
	i, ok := toInt(v)
	if !ok || int64(int(i)) != i {
		return 0, errs.BadParam("parameter %s: want int, got %s", key, describe(v))
	}
	return int(i), nil
}

// Int64 returns the int parameter key as an int64.
func (p Params) Int64(key string) (int64, error) {
	v, err := p.get(key)
	if err != nil {
		return 0, err
	}
	i, ok := toInt(v)
	if !ok {
		return 0, errs.BadParam("parameter %s: want int, got %s", key, describe(v))
	}
	return i, nil
}

// Float returns the float parameter key (an integer is converted).
func (p Params) Float(key string) (float64, error) {
	v, err := p.get(key)
	if err != nil {
		return 0, err
	}
	out, err := Param{Name: key, Type: ParamFloat}.Convert(v)
	if err != nil {
		return 0, err
	}
	return out.(float64), nil
}

// Str returns the string parameter key.
func (p Params) Str(key string) (string, error) {
	v, err := p.get(key)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", errs.BadParam("parameter %s: want string, got %s", key, describe(v))
	}
	return s, nil
}

// Bool returns the bool parameter key.
func (p Params) Bool(key string) (bool, error) {
	v, err := p.get(key)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, errs.BadParam("parameter %s: want bool, got %s", key, describe(v))
	}
	return b, nil
}

// Ints returns the list parameter key as ints.
func (p Params) Ints(key string) ([]int, error) {
	v, err := p.get(key)
	if err != nil {
		return nil, err
	}
	out, err := Param{Name: key, Type: ParamInts}.Convert(v)
	if err != nil {
		return nil, err
	}
	l := out.([]int64)
	r := make([]int, len(l))
	for i, x := range l {
		if int64(int(x)) != x {
			return nil, errs.BadParam("parameter %s: %d overflows int", key, x)
		}
		r[i] = int(x)
	}
	return r, nil
}

// Seed returns the seed parameter "seed" when it is present and non-negative, else
// derived (the seed the registry derives from the run's seed).
func (p Params) Seed(derived uint64) uint64 {
	if v, ok := p["seed"]; ok {
		if i, ok := toInt(v); ok && i >= 0 {
			return uint64(i)
		}
	}
	return derived
}

// Entry describes one registry entry: its kind, name, documentation, the paper and
// section it comes from, and its parameters.
type Entry struct {
	// Kind is set by the Register method.
	Kind Kind `json:"kind"`
	// Name is the name files and Specs use (lower case with hyphens, by convention).
	Name string `json:"name"`
	// Doc says what the entry builds, in one line, naming the Go constructor.
	Doc string `json:"doc"`
	// Paper names the paper and section the entry implements (empty for generic ones).
	Paper string `json:"paper,omitempty"`
	// Params are the entry's parameters, in the order tokendist list shows them.
	Params []Param `json:"params,omitempty"`
}

// Param returns the parameter called name.
func (e Entry) Param(name string) (Param, bool) {
	for _, p := range e.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// ParamNames returns the names of e's parameters in declaration order.
func (e Entry) ParamNames() []string {
	out := make([]string, len(e.Params))
	for i, p := range e.Params {
		out[i] = p.Name
	}
	return out
}

// Resolve checks raw against e's parameters and returns the complete Params: every
// value converted (Param.Convert), every absent parameter set to its default. It fails on
// an unknown key (naming the known ones), a bad value, or a missing required parameter.
// It costs O(len(raw) + len(e.Params)).
func (e Entry) Resolve(raw map[string]any) (Params, error) {
	out := make(Params, len(e.Params))
	for k, v := range raw {
		p, ok := e.Param(k)
		if !ok {
			known := "none"
			if len(e.Params) > 0 {
				known = strings.Join(e.ParamNames(), ", ")
			}
			return nil, errs.BadParam("%s %s has no parameter %s (parameters: %s)", e.Kind, e.Name, errs.Quote([]byte(k)), known)
		}
		c, err := p.Convert(v)
		if err != nil {
			return nil, wrapf(err, "%s %s", e.Kind, e.Name)
		}
		out[k] = c
	}
	for _, p := range e.Params {
		if _, ok := out[p.Name]; ok {
			continue
		}
		if p.Default == nil {
			return nil, errs.BadParam("%s %s needs parameter %s (%s)", e.Kind, e.Name, p.Name, p.Type)
		}
		c, err := p.Convert(p.Default)
		if err != nil {
			return nil, wrapf(err, "%s %s: default", e.Kind, e.Name)
		}
		out[p.Name] = c
	}
	return out, nil
}

// NetworkFunc builds a network from resolved parameters; seed is the seed the registry
// derives from the run's seed (use Params.Seed to honour a "seed" parameter).
type NetworkFunc func(p Params, seed uint64) (*tokendist.Graph, error)

// LoadsFunc builds the initial loads on net.
type LoadsFunc func(net *tokendist.Graph, p Params, seed uint64) (tokendist.Loads, error)

// AlgorithmFunc builds a fresh balancer for one run on net from loads.
type AlgorithmFunc func(net *tokendist.Graph, loads tokendist.Loads, p Params) (tokendist.Balancer, error)

// MetricInput is what a metric sees after a run.
type MetricInput struct {
	// Net is the run's network and Loads its initial loads.
	Net   *tokendist.Graph
	Loads tokendist.Loads
	// Balancer is the balancer after the run (for balancer-specific statistics).
	Balancer tokendist.Balancer
	// Result is Run's result.
	Result tokendist.Result
	// Params are the algorithm's resolved parameters.
	Params Params
}

// MetricFunc computes one number from a finished run (a bound, an optimum, a
// balancer-specific statistic). It returns an error wrapping ErrNotApplicable for a run
// it does not apply to.
type MetricFunc func(m MetricInput) (float64, error)

type regEntry struct {
	Entry
	network   NetworkFunc
	loads     LoadsFunc
	algorithm AlgorithmFunc
	metric    MetricFunc
	other     any
}

// Registry maps names to network generators, load distributions, algorithms and
// metrics, each with documented parameters, so that experiment files, the tokendist
// command, Go programs and notebooks build runs the same way. It is safe for concurrent
// use. New returns one with every built-in entry; Default is the shared
// instance the command uses.
type Registry struct {
	mu      sync.RWMutex
	entries map[Kind]map[string]*regEntry
	spectra spectrumCache // λ_max per network, for Stop.Tau and the lambda_max metric
}

var (
	defaultOnce sync.Once
	defaultReg  *Registry
)

// Default returns the process-wide registry with every built-in entry; entries
// registered on it are seen by every later user (the tokendist command among them).
func Default() *Registry {
	defaultOnce.Do(func() { defaultReg = New() })
	return defaultReg
}

// New returns a registry holding every built-in network, load distribution,
// algorithm and metric (list them with Entries).
func New() *Registry {
	r := &Registry{entries: map[Kind]map[string]*regEntry{}}
	registerBuiltins(r)
	return r
}

func (r *Registry) add(kind Kind, e Entry, re *regEntry) error {
	if e.Name == "" {
		return errs.BadParam("%s entry with an empty name", kind)
	}
	seen := map[string]bool{}
	for _, p := range e.Params {
		if p.Name == "" || seen[p.Name] {
			return errs.BadParam("%s %s: empty or repeated parameter name %s", kind, errs.Quote([]byte(e.Name)), errs.Quote([]byte(p.Name)))
		}
		seen[p.Name] = true
		if p.Type < ParamInt || p.Type > ParamInts {
			return errs.BadParam("%s %s: parameter %s has type %v", kind, errs.Quote([]byte(e.Name)), errs.Quote([]byte(p.Name)), p.Type)
		}
		if p.Default != nil {
			if _, err := p.Convert(p.Default); err != nil {
				return wrapf(err, "%s %s: default", kind, errs.Quote([]byte(e.Name)))
			}
		}
	}
	e.Kind = kind
	re.Entry = e
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.entries[kind]
	if m == nil {
		m = map[string]*regEntry{}
		r.entries[kind] = m
	}
	m[e.Name] = re
	return nil
}

// RegisterNetwork adds (or replaces) the network generator e.Name. It fails on an empty
// name, a repeated or untyped parameter, a default of the wrong type, or a nil f.
func (r *Registry) RegisterNetwork(e Entry, f NetworkFunc) error {
	if f == nil {
		return errs.BadParam("nil NetworkFunc for %s", e.Name)
	}
	return r.add(KindNetwork, e, &regEntry{network: f})
}

// RegisterLoads adds (or replaces) the load distribution e.Name.
func (r *Registry) RegisterLoads(e Entry, f LoadsFunc) error {
	if f == nil {
		return errs.BadParam("nil LoadsFunc for %s", e.Name)
	}
	return r.add(KindLoads, e, &regEntry{loads: f})
}

// RegisterAlgorithm adds (or replaces) the algorithm e.Name: f builds a fresh Balancer
// for each run, so a custom balancer registered here can be swept from an experiment
// file.
func (r *Registry) RegisterAlgorithm(e Entry, f AlgorithmFunc) error {
	if f == nil {
		return errs.BadParam("nil AlgorithmFunc for %s", e.Name)
	}
	return r.add(KindAlgorithm, e, &regEntry{algorithm: f})
}

// RegisterMetric adds (or replaces) the metric e.Name, computed after each run that asks
// for it.
func (r *Registry) RegisterMetric(e Entry, f MetricFunc) error {
	if f == nil {
		return errs.BadParam("nil MetricFunc for %s", e.Name)
	}
	return r.add(KindMetric, e, &regEntry{metric: f})
}

// RegisterOther adds an entry of another kind (KindWorkload, KindChurn or a kind of the
// caller's) with an arbitrary constructor value, retrieved by Constructor.
func (r *Registry) RegisterOther(kind Kind, e Entry, constructor any) error {
	if constructor == nil {
		return errs.BadParam("nil constructor for %s %s", kind, e.Name)
	}
	return r.add(kind, e, &regEntry{other: constructor})
}

// Constructor returns the constructor registered for kind and name: a NetworkFunc,
// LoadsFunc, AlgorithmFunc, MetricFunc or the value given to RegisterOther.
func (r *Registry) Constructor(kind Kind, name string) (any, error) {
	re, err := r.lookup(kind, name)
	if err != nil {
		return nil, err
	}
	switch {
	case re.network != nil:
		return re.network, nil
	case re.loads != nil:
		return re.loads, nil
	case re.algorithm != nil:
		return re.algorithm, nil
	case re.metric != nil:
		return re.metric, nil
	}
	return re.other, nil
}

// Kinds returns the kinds that have entries, sorted.
func (r *Registry) Kinds() []Kind {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Kind, 0, len(r.entries))
	for k := range r.entries {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Entries returns the entries of kind sorted by name.
func (r *Registry) Entries(kind Kind) []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Entry, 0, len(r.entries[kind]))
	for _, e := range r.entries[kind] {
		out = append(out, e.Entry)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the names of kind's entries, sorted.
func (r *Registry) Names(kind Kind) []string {
	es := r.Entries(kind)
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

// Lookup returns the entry of kind called name, or an error wrapping ErrUnknownName
// that lists the known names.
func (r *Registry) Lookup(kind Kind, name string) (Entry, error) {
	re, err := r.lookup(kind, name)
	if err != nil {
		return Entry{}, err
	}
	return re.Entry, nil
}

func (r *Registry) lookup(kind Kind, name string) (*regEntry, error) {
	r.mu.RLock()
	re := r.entries[kind][name]
	r.mu.RUnlock()
	if re == nil {
		return nil, fmt.Errorf("%w: %s %s (known: %s)", ErrUnknownName, kind, errs.Quote([]byte(name)), strings.Join(r.Names(kind), ", "))
	}
	return re, nil
}

// Choice names a registry entry and its parameters.
type Choice struct {
	// Name is the registry entry's name.
	Name string `json:"name"`
	// Params are its parameters (absent ones take their defaults).
	Params Params `json:"params,omitempty"`
}

// StopRule says when a run of a Spec stops (besides the balancer's own rule). Its fields
// are those of tokendist.RunOptions under the same names, plus Tau; the JSON keys are the
// keys of an experiment file's stop block.
type StopRule struct {
	// MaxSteps is RunOptions.MaxSteps: it bounds the steps (0: the balancer's budget,
	// else DefaultMaxSteps).
	MaxSteps int64 `json:"max_steps,omitempty"`
	// Tau sets the step budget to τ(G, K) (BalancingTime with the certified upper bound
	// Spectrum.Upper on the network's λ_max, so that τ is not short, and K the initial
	// discrepancy; Berenbrink et al., Theorem 2.2 and Table 1). It costs a
	// LambdaMax per distinct network: the Registry keeps the spectra of the last 64
	// networks (keyed by their links), so the seeds and algorithms of a sweep on one
	// network, and the lambda_max metric, share one computation.
	Tau bool `json:"tau,omitempty"`
	// UseTarget is RunOptions.UseTarget: stop once the discrepancy is at most
	// TargetDiscrepancy. It is needed because 0 is a meaningful target (perfect balance);
	// an experiment file's stop.target sets both.
	UseTarget bool `json:"use_target,omitempty"`
	// TargetDiscrepancy is RunOptions.TargetDiscrepancy, the target of UseTarget. Its
	// JSON key is "target", the key of an experiment file's stop block (kept so that
	// files and stored configurations keep working).
	TargetDiscrepancy int64 `json:"target,omitempty"`
	// NoStability disables the stability stop of Periodic balancers.
	NoStability bool `json:"no_stability,omitempty"`
	// StopWhenStable is RunOptions.StopWhenStable: the stability stop also for
	// Periodic balancers with their own termination rule.
	StopWhenStable bool `json:"stop_when_stable,omitempty"`
}

// Spec is one run described by registry names: a network, initial loads, an algorithm,
// a stop rule, a seed, the sampling interval and the metrics to compute. Canonical
// fills in every default so that equal runs have equal Specs.
type Spec struct {
	// Network, Loads and Algorithm name registry entries of their kinds.
	Network   Choice `json:"network"`
	Loads     Choice `json:"loads"`
	Algorithm Choice `json:"algorithm"`
	// Stop adds stop rules to the balancer's own.
	Stop StopRule `json:"stop"`
	// Seed fixes every random choice: DeriveSeed(Seed, 1) the network's,
	// DeriveSeed(Seed, 2) the loads', Seed itself the run's (RunOptions.Seed).
	Seed uint64 `json:"seed"`
	// SampleEvery is RunOptions.SampleEvery.
	SampleEvery int64 `json:"sample_every,omitempty"`
	// Metrics name registry metrics computed after the run.
	Metrics []string `json:"metrics,omitempty"`
	// Workload names KindWorkload entries applied after every step, in order
	// (RunOptions.Workload; several are combined with NewCombinedWorkload). Empty: a
	// static run.
	Workload []Choice `json:"workload,omitempty"`
	// Churn, if not nil, names the KindChurn entry of RunOptions.Churn.
	Churn *Choice `json:"churn,omitempty"`
	// Steady, if not nil, is RunOptions.Steady; Run then adds the steady-state metrics
	// to Result.Metrics (see dynamicMetrics).
	Steady *tokendist.SteadyOptions `json:"steady,omitempty"`
	// NetworkModel, if not nil, runs the algorithm's node programs in the event
	// simulator (package async's; see RegisterSimulator) under this fault model,
	// with Stop.MaxSteps (or τ) rounds; Run then adds the async_* metrics.
	NetworkModel *NetworkModel `json:"network_model,omitempty"`
}

// Result is the outcome of Registry.Run.
type Result struct {
	// Spec is the canonical spec that ran.
	Spec Spec `json:"spec"`
	// Result is Run's result.
	Result tokendist.Result `json:"result"`
	// N and Edges describe the network; InitialDiscrepancy and Total the initial loads.
	N                  int   `json:"n"`
	Edges              int   `json:"edges"`
	Total              int64 `json:"total"`
	InitialDiscrepancy int64 `json:"initial_discrepancy"`
	// MaxSteps is the explicit step budget of the run (StopRule.MaxSteps, or τ(G, K)
	// with StopRule.Tau); 0 means Run's default (the balancer's StepBudget, else
	// DefaultMaxSteps).
	MaxSteps int64 `json:"max_steps"`
	// Metrics holds the requested metrics by name.
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Canonical returns s with every choice's parameters resolved against the registry
// (converted, defaults filled), metrics sorted and deduplicated, or the first error,
// naming the entry and parameter. Two Specs that describe the same run have equal
// Canonical forms (and equal JSON encodings: map keys are sorted).
func (r *Registry) Canonical(s Spec) (Spec, error) {
	var err error
	for _, c := range []struct {
		kind Kind
		ch   *Choice
	}{{KindNetwork, &s.Network}, {KindLoads, &s.Loads}, {KindAlgorithm, &s.Algorithm}} {
		var e Entry
		if e, err = r.Lookup(c.kind, c.ch.Name); err != nil {
			return s, err
		}
		if c.ch.Params, err = e.Resolve(c.ch.Params); err != nil {
			return s, err
		}
	}
	if len(s.Workload) > 0 {
		ws := make([]Choice, len(s.Workload))
		for i, c := range s.Workload {
			e, err := r.Lookup(KindWorkload, c.Name)
			if err != nil {
				return s, err
			}
			if c.Params, err = e.Resolve(c.Params); err != nil {
				return s, err
			}
			ws[i] = c
		}
		s.Workload = ws
	} else {
		s.Workload = nil
	}
	if s.Churn != nil {
		c := *s.Churn
		e, err := r.Lookup(KindChurn, c.Name)
		if err != nil {
			return s, err
		}
		if c.Params, err = e.Resolve(c.Params); err != nil {
			return s, err
		}
		s.Churn = &c
	}
	if s.Steady != nil {
		st := *s.Steady
		if st.WarmUp < 0 || st.Every < 0 {
			return s, errs.BadParam("negative steady warm_up %d or every %d", st.WarmUp, st.Every)
		}
		if st.Every == 0 {
			st.Every = 1
		}
		s.Steady = &st
	}
	if s.Stop.MaxSteps < 0 {
		return s, errs.BadParam("stop max_steps %d is negative", s.Stop.MaxSteps)
	}
	if s.SampleEvery < 0 {
		return s, errs.BadParam("sample_every %d is negative", s.SampleEvery)
	}
	if s.NetworkModel != nil {
		if s.NetworkModel.LinkDelay != nil {
			return s, errs.BadParam("network_model: a LinkDelay function cannot be stored in a Spec")
		}
		if s.NetworkModel.Patience < 0 {
			return s, errs.BadParam("network_model: patience %d is negative", s.NetworkModel.Patience)
		}
		m := *s.NetworkModel
		s.NetworkModel = &m
	}
	ms := append([]string(nil), s.Metrics...)
	sort.Strings(ms)
	s.Metrics = ms[:0]
	for i, m := range ms {
		if i > 0 && m == ms[i-1] {
			continue
		}
		if _, err := r.Lookup(KindMetric, m); err != nil {
			return s, err
		}
		s.Metrics = append(s.Metrics, m)
	}
	if len(s.Metrics) == 0 {
		s.Metrics = nil
	}
	return s, nil
}

// DeriveSeed returns the seed of stream i of a run with the given seed (splitmix64 of
// their combination): the network uses stream 1 and the loads stream 2, so one run seed
// fixes every random choice and distinct seeds give independent networks and loads.
func DeriveSeed(seed uint64, i uint64) uint64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Build returns the network, initial loads and a fresh balancer of the canonical spec s
// (see Canonical). It costs the constructors'.
func (r *Registry) Build(s Spec) (*tokendist.Graph, tokendist.Loads, tokendist.Balancer, error) {
	ne, err := r.lookup(KindNetwork, s.Network.Name)
	if err != nil {
		return nil, nil, nil, err
	}
	le, err := r.lookup(KindLoads, s.Loads.Name)
	if err != nil {
		return nil, nil, nil, err
	}
	ae, err := r.lookup(KindAlgorithm, s.Algorithm.Name)
	if err != nil {
		return nil, nil, nil, err
	}
	if ne.network == nil || le.loads == nil || ae.algorithm == nil {
		return nil, nil, nil, errs.BadParam("entry without a constructor")
	}
	g, err := ne.network(s.Network.Params, DeriveSeed(s.Seed, 1))
	if err != nil {
		return nil, nil, nil, wrapf(err, "network %s", s.Network.Name)
	}
	if g == nil {
		return nil, nil, nil, wrapf(tokendist.ErrNilNetwork, "network %s", s.Network.Name)
	}
	l, err := le.loads(g, s.Loads.Params, DeriveSeed(s.Seed, 2))
	if err != nil {
		return nil, nil, nil, wrapf(err, "loads %s", s.Loads.Name)
	}
	b, err := ae.algorithm(g, l, s.Algorithm.Params)
	if err != nil {
		return nil, nil, nil, wrapf(treeHint(ae, s.Algorithm.Params, err), "algorithm %s", s.Algorithm.Name)
	}
	if b == nil {
		return nil, nil, nil, wrapf(tokendist.ErrNilBalancer, "algorithm %s", s.Algorithm.Name)
	}
	return g, l, b, nil
}

// Run canonicalises s, builds its network, loads and balancer, runs them with
// tokendist.Run (or, with a NetworkModel, the balancer's node programs with the
// registered Simulator, async.Simulate) and computes the requested metrics. The Result holds the canonical spec.
// A failed run returns the partial result and the error. Same spec, same result, for any
// Workers.
//
// The Spec fixes the run: its stop rule, seed, sampling, workload, churn and steady
// options become the RunOptions of tokendist.Run. opts (nil: the defaults) supplies only
// what a Spec does not fix, and Run reads exactly two of its fields:
//
//   - Workers bounds the goroutines per step (0: GOMAXPROCS); results never depend on it.
//   - Recorder, if not nil, receives every sample as it is taken (progress, live plots).
//     A Spec with a NetworkModel has no samples: the Simulator is given the Recorder,
//     and package async's observes the simulated run with it when it implements
//     async.Observer (package animate's Recorder does).
//
// Every other field of opts (MaxSteps, UseTarget, TargetDiscrepancy, NoStability,
// StopWhenStable, SampleEvery, Seed, Workload, Churn, Steady, and any field RunOptions
// gains later) belongs to the Spec and must be left zero: Run rejects an opts that sets
// one with an error wrapping tokendist.ErrBadParameter that names the field and the Spec
// field to set instead, so that a stored Spec always describes the run that produced its
// Result.
func (r *Registry) Run(ctx context.Context, s Spec, opts *tokendist.RunOptions) (Result, error) {
	if err := checkRunOptions(opts); err != nil {
		return Result{Spec: s, Result: tokendist.Result{Status: tokendist.StatusFailed}}, err
	}
	s, err := r.Canonical(s)
	if err != nil {
		return Result{Spec: s, Result: tokendist.Result{Status: tokendist.StatusFailed}}, err
	}
	var workers int
	var rec tokendist.Recorder
	if opts != nil {
		workers, rec = opts.Workers, opts.Recorder
	}
	out := Result{Spec: s}
	g, l, b, err := r.Build(s)
	if err != nil {
		out.Result.Status = tokendist.StatusFailed
		return out, err
	}
	out.N, out.Edges = g.Order(), g.Size()
	out.Total, out.InitialDiscrepancy = l.Total(), l.Discrepancy()
	ro := tokendist.RunOptions{
		MaxSteps:          s.Stop.MaxSteps,
		UseTarget:         s.Stop.UseTarget,
		TargetDiscrepancy: s.Stop.TargetDiscrepancy,
		NoStability:       s.Stop.NoStability,
		StopWhenStable:    s.Stop.StopWhenStable,
		SampleEvery:       s.SampleEvery,
		Seed:              s.Seed,
		Workers:           workers,
		Recorder:          rec,
		Steady:            s.Steady,
	}
	if ro.Workload, ro.Churn, err = r.BuildDynamic(s); err != nil {
		out.Result.Status = tokendist.StatusFailed
		return out, err
	}
	if s.Stop.Tau {
		sp, err := r.lambdaMax(g)
		if err != nil {
			out.Result.Status = tokendist.StatusFailed
			return out, wrapf(err, "stop tau")
		}
		k := out.InitialDiscrepancy
		if k < 1 {
			k = 1
		}
		tau, err := tokendist.BalancingTime(sp.Upper, g.Order(), k)
		if err != nil {
			out.Result.Status = tokendist.StatusFailed
			return out, wrapf(err, "stop tau")
		}
		if ro.MaxSteps == 0 || tau < ro.MaxSteps {
			ro.MaxSteps = tau
		}
	}
	out.MaxSteps = ro.MaxSteps
	var res tokendist.Result
	if s.NetworkModel != nil {
		res, out.Metrics, err = runAsync(ctx, s, g, l, b, &ro)
	} else {
		res, err = tokendist.Run(ctx, g, l, b, &ro)
	}
	out.Result = res
	if err != nil {
		return out, err
	}
	if s.NetworkModel == nil && (len(s.Workload) > 0 || s.Churn != nil || s.Steady != nil) {
		out.Metrics = dynamicMetrics(res)
	}
	if len(s.Metrics) > 0 {
		if out.Metrics == nil {
			out.Metrics = make(map[string]float64, len(s.Metrics))
		}
		for _, m := range s.Metrics {
			me, err := r.lookup(KindMetric, m)
			if err != nil {
				return out, err
			}
			v, err := me.metric(MetricInput{Net: g, Loads: l, Balancer: b, Result: res, Params: s.Algorithm.Params})
			if errors.Is(err, ErrNotApplicable) {
				continue
			}
			if err != nil {
				return out, wrapf(err, "metric %s", m)
			}
			out.Metrics[m] = v
		}
	}
	return out, nil
}

// callerOptions are the fields of tokendist.RunOptions that Registry.Run takes from its
// opts argument; every other field is fixed by the Spec.
var callerOptions = map[string]bool{"Workers": true, "Recorder": true}

// specField names the Spec field that fixes a RunOptions field, for Run's error.
var specField = map[string]string{
	"MaxSteps": "Stop.MaxSteps (or Stop.Tau)", "UseTarget": "Stop.UseTarget", "TargetDiscrepancy": "Stop.TargetDiscrepancy",
	"NoStability": "Stop.NoStability", "StopWhenStable": "Stop.StopWhenStable", "SampleEvery": "SampleEvery",
	"Seed": "Seed", "Workload": "Workload", "Churn": "Churn", "Steady": "Steady",
}

// checkRunOptions rejects an opts that sets a field the Spec owns (see Registry.Run).
// It walks the fields by reflection, so a field RunOptions gains later is rejected too
// until Run reads it.
func checkRunOptions(opts *tokendist.RunOptions) error {
	if opts == nil {
		return nil
	}
	v := reflect.ValueOf(*opts)
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || callerOptions[f.Name] || v.Field(i).IsZero() {
			continue
		}
		instead := "the Spec has no such field yet"
		if where, ok := specField[f.Name]; ok {
			instead = "set Spec." + where + " instead"
		}
		return fmt.Errorf("%w: Registry.Run: RunOptions.%s = %s is fixed by the Spec (%s; Run reads only Workers and Recorder from opts)",
			tokendist.ErrBadParameter, f.Name, describeOption(v.Field(i)), instead)
	}
	return nil
}

// describeOption formats a RunOptions field value for an error message.
func describeOption(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return fmt.Sprintf("%T", v.Interface())
	}
	return fmt.Sprintf("%v", v.Interface())
}
