package sweep

import "gab/report"

// A point's fixed figure fields (report.SweepFixedFields: the fields that
// held its figures before "figures" did, written for schema version 2 only)
// are written from the table: a catalog figure's from the point's figure of
// its key (0 without latencies in "latency"), the point's own statistics from
// ownFixed.

// ownFixed are the values of the fixed fields that are not the point's
// catalog figure: its statistics that are no catalog figure, and ab's counts
// of complete and failed requests.
var ownFixed = map[string]func(p *PointResult) (any, bool){
	"mean_per_s":            always(func(p *PointResult) float64 { return p.RPS.Mean }),
	"sd_per_s":              always(func(p *PointResult) float64 { return p.RPS.SD }),
	"min_per_s":             always(func(p *PointResult) float64 { return p.RPS.Min }),
	"max_per_s":             always(func(p *PointResult) float64 { return p.RPS.Max }),
	"ci95_half_width_per_s": always(func(p *PointResult) float64 { return p.RPS.CI95 }),
	"cv":                    always(func(p *PointResult) float64 { return p.RPS.CV }),
	"cv_above_max":          always(func(p *PointResult) bool { return p.RPS.Unstable }),
	"count":                 always(func(p *PointResult) int64 { return p.LatencyCount }),
	"deviation_ms":          always(func(p *PointResult) float64 { return p.DeviationMs }),
	"run_sds_ms":            func(p *PointResult) (any, bool) { return p.RunSDsMs, len(p.RunSDsMs) > 0 },
	"requests_complete":     always(func(p *PointResult) int { return p.Complete }),
	"requests_failed":       always(func(p *PointResult) int { return p.Failed }),
	"user_percent":          hostField(func(h *HostCPU) float64 { return h.UserPct }),
	"system_percent":        hostField(func(h *HostCPU) float64 { return h.SystemPct }),
	"softirq_percent":       hostField(func(h *HostCPU) float64 { return h.SoftIRQPct }),
	"steal_percent":         hostField(func(h *HostCPU) float64 { return h.StealPct }),
	"busy_percent":          hostField(func(h *HostCPU) float64 { return h.BusyPct }),
	"busy_us_per_request":   hostField(func(h *HostCPU) float64 { return h.BusyUsPerReq }),
}

func always[T any](v func(p *PointResult) T) func(p *PointResult) (any, bool) {
	return func(p *PointResult) (any, bool) { return v(p), true }
}

func hostField(v func(h *HostCPU) float64) func(p *PointResult) (any, bool) {
	return func(p *PointResult) (any, bool) { return v(&p.HostCPU), p.HostCPU.Known }
}

// fixedValue is the fixed field's value at the point (ok false: not
// written).
func fixedValue(f *report.SweepFixedField, p *PointResult) (any, bool) {
	if own := ownFixed[f.Name]; own != nil {
		return own(p)
	}
	v, ok := p.Value(f.Key)
	switch {
	case f.Object == report.SweepLatency && p.LatencyCount == 0:
		return 0.0, true
	case f.Optional:
		return v, ok
	}
	return v, true
}

// fixedObject is the point's object of fixed fields of that name (nil when
// it has none of them).
func fixedObject(p *PointResult, object string) report.FixedFields {
	var out report.FixedFields
	for i := range report.SweepFixedFields {
		f := &report.SweepFixedFields[i]
		if f.Object != object {
			continue
		}
		if v, ok := fixedValue(f, p); ok {
			if out == nil {
				out = report.FixedFields{}
			}
			out[f.Name] = v
		}
	}
	return out
}

// fixedOptional is a float fixed field of the point itself (nil: not
// written).
func fixedOptional(p *PointResult, name string) *float64 {
	for i := range report.SweepFixedFields {
		if f := &report.SweepFixedFields[i]; f.Object == "" && f.Name == name {
			if v, ok := fixedValue(f, p); ok {
				x, _ := v.(float64)
				return &x
			}
		}
	}
	return nil
}

// fixedFloat is fixedOptional, 0 where not written.
func fixedFloat(p *PointResult, name string) float64 {
	if v := fixedOptional(p, name); v != nil {
		return *v
	}
	return 0
}
