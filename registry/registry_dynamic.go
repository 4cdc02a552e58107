package registry

import (
	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
)

// WorkloadFunc builds a fresh workload for one run from resolved parameters; it is the
// constructor of a KindWorkload entry (RegisterOther).
type WorkloadFunc func(p Params) (tokendist.Workload, error)

// ChurnFunc builds a fresh link churn for one run from resolved parameters; it is the
// constructor of a KindChurn entry (RegisterOther).
type ChurnFunc func(p Params) (tokendist.Churn, error)

const paperDynamic = "docs/dynamic.md"

func pFloat(name string, def any, doc string) Param {
	return Param{Name: name, Type: ParamFloat, Default: def, Doc: doc}
}

func registerDynamic(r *Registry) {
	wl := func(e Entry, f WorkloadFunc) { must(r.RegisterOther(KindWorkload, e, f)) }
	wl(Entry{Name: "poisson", Doc: "Poisson arrivals at rate λ per node (per_node) or in total (tokendist.NewPoissonArrivals)", Paper: paperDynamic + ", The model",
		Params: []Param{pFloat("rate", nil, "arrival rate λ (tokens per step, per node with per_node)"),
			{Name: "per_node", Type: ParamBool, Default: true, Doc: "rate is per node (true) or for the whole network (false)"}}},
		func(p Params) (tokendist.Workload, error) {
			rate, err := p.Float("rate")
			if err != nil {
				return nil, err
			}
			per, err := p.Bool("per_node")
			if err != nil {
				return nil, err
			}
			return tokendist.NewPoissonArrivals(rate, per)
		})
	wl(Entry{Name: "hotspot", Doc: "Poisson arrivals at total rate λ on the listed nodes only (tokendist.NewHotSpotArrivals)", Paper: paperDynamic + ", The study B",
		Params: []Param{pFloat("rate", nil, "total arrival rate λ (tokens per step)"),
			{Name: "nodes", Type: ParamInts, Default: []int64{0}, Doc: "the hot-spot nodes"}}},
		func(p Params) (tokendist.Workload, error) {
			rate, err := p.Float("rate")
			if err != nil {
				return nil, err
			}
			nodes, err := p.Ints("nodes")
			if err != nil {
				return nil, err
			}
			return tokendist.NewHotSpotArrivals(rate, nodes...)
		})
	wl(Entry{Name: "adversary", Doc: "the heaviest-node adversary: rate tokens per step onto a heaviest node (tokendist.NewAdversary)", Paper: paperDynamic + ", The study C",
		Params: []Param{pFloat("rate", nil, "tokens added per step")}},
		func(p Params) (tokendist.Workload, error) {
			rate, err := p.Float("rate")
			if err != nil {
				return nil, err
			}
			return tokendist.NewAdversary(rate)
		})
	wl(Entry{Name: "trace", Doc: "arrivals replayed from a CSV trace file of rows step,node,count (tokendist.NewTraceArrivals)", Paper: paperDynamic + ", The API",
		Params: []Param{{Name: "file", Type: ParamString, Doc: "path of the CSV trace"}}},
		func(p Params) (tokendist.Workload, error) {
			name, err := p.Str("file")
			if err != nil {
				return nil, err
			}
			fh, err := openFile(name, "trace file", traceFactor)
			if err != nil {
				return nil, err
			}
			defer fh.Close()
			return tokendist.NewTraceArrivals(fh)
		})
	wl(Entry{Name: "service", Doc: "service: each node completes ⌊μ⌋ tokens plus one with probability μ − ⌊μ⌋ per step, never more than its load (tokendist.NewService)", Paper: paperDynamic + ", The model",
		Params: []Param{pFloat("mu", nil, "service rate μ in tokens per node and step (≥ 0)")}},
		func(p Params) (tokendist.Workload, error) {
			mu, err := p.Float("mu")
			if err != nil {
				return nil, err
			}
			return tokendist.NewService(mu)
		})
	must(r.RegisterOther(KindChurn, Entry{Name: "random-churn", Doc: "random link churn: a down link recovers with probability recover, an up link fails with probability fail, per step (tokendist.NewRandomLinkChurn)", Paper: paperDynamic + ", The study D",
		Params: []Param{pFloat("fail", nil, "failure probability per up link and step, in [0, 1]"),
			pFloat("recover", nil, "recovery probability per down link and step, in [0, 1]")}},
		ChurnFunc(func(p Params) (tokendist.Churn, error) {
			fail, err := p.Float("fail")
			if err != nil {
				return nil, err
			}
			rec, err := p.Float("recover")
			if err != nil {
				return nil, err
			}
			return tokendist.NewRandomLinkChurn(fail, rec)
		})))
}

// BuildDynamic returns the workload (the listed ones combined, nil when there are none)
// and churn (nil when absent) of the canonical spec s. It costs the constructors'.
func (r *Registry) BuildDynamic(s Spec) (tokendist.Workload, tokendist.Churn, error) {
	var ws []tokendist.Workload
	for _, c := range s.Workload {
		re, err := r.lookup(KindWorkload, c.Name)
		if err != nil {
			return nil, nil, err
		}
		f, ok := re.other.(WorkloadFunc)
		if !ok {
			return nil, nil, errs.BadParam("workload %s has no WorkloadFunc", c.Name)
		}
		w, err := f(c.Params)
		if err != nil {
			return nil, nil, wrapf(err, "workload %s", c.Name)
		}
		ws = append(ws, w)
	}
	var w tokendist.Workload
	switch len(ws) {
	case 0:
	case 1:
		w = ws[0]
	default:
		cw, err := tokendist.NewCombinedWorkload(ws...)
		if err != nil {
			return nil, nil, wrapf(err, "workload")
		}
		w = cw
	}
	var ch tokendist.Churn
	if s.Churn != nil {
		re, err := r.lookup(KindChurn, s.Churn.Name)
		if err != nil {
			return nil, nil, err
		}
		f, ok := re.other.(ChurnFunc)
		if !ok {
			return nil, nil, errs.BadParam("churn %s has no ChurnFunc", s.Churn.Name)
		}
		if ch, err = f(s.Churn.Params); err != nil {
			return nil, nil, wrapf(err, "churn %s", s.Churn.Name)
		}
	}
	return w, ch, nil
}

// dynamicMetrics returns the numbers of a dynamic run that Registry.Run reports in
// Result.Metrics: arrived, completed and initial (Result), and with steady-state
// measurement steady_mean_discrepancy, steady_mean_max, steady_mean_total,
// steady_arrival_rate, steady_moved_per_arrival, steady_growth, steady_unstable (0 or
// 1) and steady_samples (Result.Steady).
func dynamicMetrics(res tokendist.Result) map[string]float64 {
	m := map[string]float64{
		"arrived":   float64(res.Arrived),
		"completed": float64(res.Completed),
		"initial":   float64(res.Initial),
	}
	if st := res.Steady; st != nil {
		m["steady_mean_discrepancy"] = st.MeanDiscrepancy
		m["steady_mean_max"] = st.MeanMax
		m["steady_mean_total"] = st.MeanTotal
		m["steady_arrival_rate"] = st.ArrivalRate
		m["steady_moved_per_arrival"] = st.MovedPerArrival
		m["steady_growth"] = st.Growth
		m["steady_samples"] = float64(st.Samples)
		m["steady_unstable"] = 0
		if st.Unstable {
			m["steady_unstable"] = 1
		}
	}
	return m
}
