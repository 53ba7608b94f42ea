package sweep

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"

	"gab/report"
)

// fixedField is one of a point's fixed figure fields: the fields that held
// its figures before "figures" did (schema version 1), still written for
// schema version 2. Object is the JSON object holding it in the point ("" for
// the point itself), Name its name there; Key the catalog figure it holds
// ("" for a statistic of the point's own: the spread of req/s across its
// runs, the latency deviation by the sweep's estimator, the host's CPU). The
// point's fixed fields are written from this table (fixedObject) and a
// version 1 document's figures read through it (DocPoint.Figure).
type fixedField struct {
	object, name, key string
	// value is the field's value at a point (ok false: not written).
	value func(p *PointResult) (v any, ok bool)
}

// The objects of a point holding fixed fields.
const (
	objRPS     = "requests_per_second"
	objLatency = "latency"
	objHostCPU = "host_cpu"
)

func always[T any](v func(p *PointResult) T) func(p *PointResult) (any, bool) {
	return func(p *PointResult) (any, bool) { return v(p), true }
}

// figure is the point's catalog figure of that key, 0 where it has none.
func figure(key string) func(p *PointResult) (any, bool) {
	return func(p *PointResult) (any, bool) { v, _ := p.Value(key); return v, true }
}

// latencyFigure is figure, 0 where the point counted no latency.
func latencyFigure(key string) func(p *PointResult) (any, bool) {
	return func(p *PointResult) (any, bool) {
		if p.LatencyCount == 0 {
			return 0.0, true
		}
		v, _ := p.Value(key)
		return v, true
	}
}

// optionalFigure is the point's catalog figure of that key, not written where
// it has none (a CPU not measured).
func optionalFigure(key string) func(p *PointResult) (any, bool) {
	return func(p *PointResult) (any, bool) { return p.Value(key) }
}

func hostField(v func(h *HostCPU) float64) func(p *PointResult) (any, bool) {
	return func(p *PointResult) (any, bool) { return v(&p.HostCPU), p.HostCPU.Known }
}

// fixedFields are the point's fixed fields in the order they are written.
var fixedFields = []fixedField{
	{objRPS, "mean_per_s", "rps", always(func(p *PointResult) float64 { return p.RPS.Mean })},
	{objRPS, "sd_per_s", "", always(func(p *PointResult) float64 { return p.RPS.SD })},
	{objRPS, "min_per_s", "", always(func(p *PointResult) float64 { return p.RPS.Min })},
	{objRPS, "max_per_s", "", always(func(p *PointResult) float64 { return p.RPS.Max })},
	{objRPS, "ci95_half_width_per_s", "", always(func(p *PointResult) float64 { return p.RPS.CI95 })},
	{objRPS, "cv", "", always(func(p *PointResult) float64 { return p.RPS.CV })},
	{objRPS, "cv_above_max", "", always(func(p *PointResult) bool { return p.RPS.Unstable })},
	{objLatency, "count", "", always(func(p *PointResult) int64 { return p.LatencyCount })},
	{objLatency, "mean_ms", "mean", latencyFigure("mean")},
	{objLatency, "sd_ms", "sd", latencyFigure("sd")},
	{objLatency, "p50_ms", "p50", latencyFigure("p50")},
	{objLatency, "p99_ms", "p99", latencyFigure("p99")},
	{objLatency, "min_ms", "min", latencyFigure("min")},
	{objLatency, "deviation_ms", "", always(func(p *PointResult) float64 { return p.DeviationMs })},
	{objLatency, "run_sds_ms", "", func(p *PointResult) (any, bool) { return p.RunSDsMs, len(p.RunSDsMs) > 0 }},
	{"", "requests_complete", "complete", always(func(p *PointResult) int { return p.Complete })},
	// requests_failed is ab's count (the catalog's "failed" also counts the
	// requests unanswered at the stop); a version 1 document's "failed".
	{"", "requests_failed", "failed", always(func(p *PointResult) int { return p.Failed })},
	{"", "received_mbit_per_s", "received_mbit_per_s", figure("received_mbit_per_s")},
	{"", "sent_mbit_per_s", "sent_mbit_per_s", figure("sent_mbit_per_s")},
	{"", "client_cpu_percent_of_one_core", "client_cpu_percent", optionalFigure("client_cpu_percent")},
	{"", "client_cpu_us_per_request", "client_cpu_us_per_request", optionalFigure("client_cpu_us_per_request")},
	{"", "server_cpu_us_per_request", "server_cpu_us_per_request", optionalFigure("server_cpu_us_per_request")},
	{"", "server_cpu_percent_of_one_core", "server_cpu_percent", optionalFigure("server_cpu_percent")},
	{objHostCPU, "user_percent", "", hostField(func(h *HostCPU) float64 { return h.UserPct })},
	{objHostCPU, "system_percent", "", hostField(func(h *HostCPU) float64 { return h.SystemPct })},
	{objHostCPU, "softirq_percent", "", hostField(func(h *HostCPU) float64 { return h.SoftIRQPct })},
	{objHostCPU, "steal_percent", "", hostField(func(h *HostCPU) float64 { return h.StealPct })},
	{objHostCPU, "busy_percent", "", hostField(func(h *HostCPU) float64 { return h.BusyPct })},
	{objHostCPU, "busy_us_per_request", "", hostField(func(h *HostCPU) float64 { return h.BusyUsPerReq })},
}

// Fields is one of a point's objects of fixed fields (fixedFields): name →
// value as JSON decodes it (float64, bool, []any), or as fixedObject sets it.
// It is written in fixedFields' order.
type Fields map[string]any

// Float is the named field as a number (ok false: absent or not a number).
func (fs Fields) Float(name string) (float64, bool) {
	switch v := fs[name].(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	}
	return 0, false
}

// Floats is the named field as a list of numbers (nil: absent).
func (fs Fields) Floats(name string) []float64 {
	switch v := fs[name].(type) {
	case []float64:
		return v
	case []any:
		out := make([]float64, 0, len(v))
		for _, x := range v {
			if f, ok := x.(float64); ok {
				out = append(out, f)
			}
		}
		return out
	}
	return nil
}

// MarshalJSON writes the fields in fixedFields' order (any other after them,
// by name).
func (fs Fields) MarshalJSON() ([]byte, error) {
	names := make([]string, 0, len(fs))
	for n := range fs {
		names = append(names, n)
	}
	order := func(n string) int {
		i := slices.IndexFunc(fixedFields, func(f fixedField) bool { return f.name == n })
		if i < 0 {
			return len(fixedFields)
		}
		return i
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := order(names[i]), order(names[j]); a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(n)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(fs[n])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// fixedObject is the point's object of fixed fields of that name (nil when
// it has none of them).
func fixedObject(p *PointResult, object string) Fields {
	var out Fields
	for i := range fixedFields {
		f := &fixedFields[i]
		if f.object != object {
			continue
		}
		if v, ok := f.value(p); ok {
			if out == nil {
				out = Fields{}
			}
			out[f.name] = v
		}
	}
	return out
}

// fixedFloat is a float fixed field of the point itself (object "").
func fixedFloat(p *PointResult, name string) float64 {
	for i := range fixedFields {
		if f := &fixedFields[i]; f.object == "" && f.name == name {
			v, _ := f.value(p)
			x, _ := v.(float64)
			return x
		}
	}
	return 0
}

// fixedOptional is an optional float fixed field of the point itself (nil:
// not measured).
func fixedOptional(p *PointResult, name string) *float64 {
	for i := range fixedFields {
		if f := &fixedFields[i]; f.object == "" && f.name == name {
			if v, ok := f.value(p); ok {
				x, _ := v.(float64)
				return &x
			}
		}
	}
	return nil
}

// object is the point's decoded object of fixed fields of that name.
func (p *DocPoint) object(name string) Fields {
	switch name {
	case objRPS:
		return p.RPS
	case objLatency:
		return p.Latency
	case objHostCPU:
		return p.HostCPU
	}
	return nil
}

// own is a fixed field of the point itself, decoded.
func (p *DocPoint) own(name string) (float64, bool) {
	opt := func(v *float64) (float64, bool) {
		if v == nil {
			return 0, false
		}
		return *v, true
	}
	switch name {
	case "requests_complete":
		return float64(p.RequestsComplete), true
	case "requests_failed":
		return float64(p.RequestsFailed), true
	case "received_mbit_per_s":
		return p.MbitPerS, true
	case "sent_mbit_per_s":
		return p.SentMbitPerS, true
	case "client_cpu_percent_of_one_core":
		return opt(p.ClientCPUPercent)
	case "client_cpu_us_per_request":
		return opt(p.ClientCPUUsPerReq)
	case "server_cpu_us_per_request":
		return opt(p.ServerCPUUsPerReq)
	case "server_cpu_percent_of_one_core":
		return opt(p.ServerCPUPercent)
	}
	return 0, false
}

// Fixed is the point's fixed field of that object and name as read (ok
// false: absent): its statistics that are not catalog figures (the spread
// of req/s across its runs, the latency deviation, the host's CPU).
func (p *DocPoint) Fixed(object, name string) (float64, bool) {
	if object == "" {
		return p.own(name)
	}
	return p.object(object).Float(name)
}

// fixedFigure is the catalog figure of that key from the point's fixed
// fields (a document without "figures"): a latency figure only where the
// point counted latencies, req/s only where it has runs.
func (p *DocPoint) fixedFigure(key string) (float64, bool) {
	for i := range fixedFields {
		f := &fixedFields[i]
		if f.key != key {
			continue
		}
		v, ok := p.Fixed(f.object, f.name)
		switch f.object {
		case objLatency:
			n, _ := p.Latency.Float("count")
			ok = ok && n > 0
		case objRPS:
			ok = ok && len(p.Runs) > 0
		}
		return v, ok
	}
	return 0, false
}

// checkFixed checks the types of a decoded point's fixed fields: a number
// each, but cv_above_max (true or false) and run_sds_ms (numbers).
func checkFixed(p *DocPoint) (field string, ok bool) {
	for i := range fixedFields {
		f := &fixedFields[i]
		if f.object == "" {
			continue // the point's own fields, decoded by their Go types
		}
		v, present := p.object(f.object)[f.name]
		if !present {
			continue
		}
		ok = false
		switch v := v.(type) {
		case float64:
			ok = f.name != "cv_above_max" && f.name != "run_sds_ms"
		case bool:
			ok = f.name == "cv_above_max"
		case []any:
			ok = f.name == "run_sds_ms" && len(p.object(f.object).Floats(f.name)) == len(v)
		}
		if !ok {
			return "." + f.object + "." + f.name, false
		}
	}
	return "", true
}

// SetFigure sets the point's catalog figure of that key (removes it when
// !ok). A point without "figures" (a version 1 document's) first gets them
// from its fixed fields, so that Figure reads every figure from there.
func (p *DocPoint) SetFigure(key string, v float64, ok bool) {
	if len(p.Figures) == 0 {
		for i := range report.Catalog {
			if x, has := p.fixedFigure(report.Catalog[i].Key); has {
				p.Figures = append(p.Figures, report.FigureValue{Key: report.Catalog[i].Key, Value: x})
			}
		}
	}
	out := p.Figures[:0:0]
	for _, f := range p.Figures {
		if f.Key != key {
			out = append(out, f)
		}
	}
	if ok {
		out = append(out, report.FigureValue{Key: key, Value: v})
	}
	p.Figures = out
}
