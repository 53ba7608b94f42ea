package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
)

// SweepFixedField is one of a sweep point's fixed figure fields: the fields
// that held its figures before "figures" did (schema version 1), still
// written for schema version 2. Object is the JSON object holding it in the
// point ("" for the point itself), Name its name there; Key the catalog
// figure it holds ("" for a statistic of the point's own: the spread of req/s
// across its runs, the latency deviation by the sweep's estimator, the host's
// CPU); Optional: absent where the figure was not measured (else 0). The
// point's fixed fields are written from this table (internal/sweep) and a
// version 1 document's figures read through it (SweepPoint.Figure).
type SweepFixedField struct {
	Object, Name, Key string
	Optional          bool
}

// The objects of a sweep point holding fixed fields.
const (
	SweepRPS     = "requests_per_second"
	SweepLatency = "latency"
	SweepHostCPU = "host_cpu"
)

// SweepFixedFields are a sweep point's fixed fields in the order they are
// written.
var SweepFixedFields = []SweepFixedField{
	{SweepRPS, "mean_per_s", "rps", false},
	{SweepRPS, "sd_per_s", "", false},
	{SweepRPS, "min_per_s", "", false},
	{SweepRPS, "max_per_s", "", false},
	{SweepRPS, "ci95_half_width_per_s", "", false},
	{SweepRPS, "cv", "", false},
	{SweepRPS, "cv_above_max", "", false},
	{SweepLatency, "count", "", false},
	{SweepLatency, "mean_ms", "mean", false},
	{SweepLatency, "sd_ms", "sd", false},
	{SweepLatency, "p50_ms", "p50", false},
	{SweepLatency, "p99_ms", "p99", false},
	{SweepLatency, "min_ms", "min", false},
	{SweepLatency, "deviation_ms", "", false},
	{SweepLatency, "run_sds_ms", "", true},
	{"", "requests_complete", "complete", false},
	// requests_failed is ab's count (the catalog's "failed" also counts the
	// requests unanswered at the stop); a version 1 document's "failed".
	{"", "requests_failed", "failed", false},
	{"", "received_mbit_per_s", "received_mbit_per_s", false},
	{"", "sent_mbit_per_s", "sent_mbit_per_s", false},
	{"", "client_cpu_percent_of_one_core", "client_cpu_percent", true},
	{"", "client_cpu_us_per_request", "client_cpu_us_per_request", true},
	{"", "server_cpu_us_per_request", "server_cpu_us_per_request", true},
	{"", "server_cpu_percent_of_one_core", "server_cpu_percent", true},
	{SweepHostCPU, "user_percent", "", true},
	{SweepHostCPU, "system_percent", "", true},
	{SweepHostCPU, "softirq_percent", "", true},
	{SweepHostCPU, "steal_percent", "", true},
	{SweepHostCPU, "busy_percent", "", true},
	{SweepHostCPU, "busy_us_per_request", "", true},
}

// FixedFields is one of a point's objects of fixed fields (SweepFixedFields): name →
// value as JSON decodes it (float64, bool, []any), or as fixedObject sets it.
// It is written in SweepFixedFields' order.
type FixedFields map[string]any

// Float is the named field as a number (ok false: absent or not a number).
func (fs FixedFields) Float(name string) (float64, bool) {
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
func (fs FixedFields) Floats(name string) []float64 {
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

// MarshalJSON writes the fields in SweepFixedFields' order (any other after them,
// by name).
func (fs FixedFields) MarshalJSON() ([]byte, error) {
	names := make([]string, 0, len(fs))
	for n := range fs {
		names = append(names, n)
	}
	order := func(n string) int {
		i := slices.IndexFunc(SweepFixedFields, func(f SweepFixedField) bool { return f.Name == n })
		if i < 0 {
			return len(SweepFixedFields)
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

// object is the point's decoded object of fixed fields of that name.
func (p *SweepPoint) object(name string) FixedFields {
	switch name {
	case SweepRPS:
		return p.RPS
	case SweepLatency:
		return p.Latency
	case SweepHostCPU:
		return p.HostCPU
	}
	return nil
}

// own is a fixed field of the point itself, decoded.
func (p *SweepPoint) own(name string) (float64, bool) {
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
func (p *SweepPoint) Fixed(object, name string) (float64, bool) {
	if object == "" {
		return p.own(name)
	}
	return p.object(object).Float(name)
}

// fixedFigure is the catalog figure of that key from the point's fixed
// fields (a document without "figures"): a latency figure only where the
// point counted latencies, req/s only where it has runs.
func (p *SweepPoint) fixedFigure(key string) (float64, bool) {
	for i := range SweepFixedFields {
		f := &SweepFixedFields[i]
		if f.Key != key {
			continue
		}
		v, ok := p.Fixed(f.Object, f.Name)
		switch f.Object {
		case SweepLatency:
			n, _ := p.Latency.Float("count")
			ok = ok && n > 0
		case SweepRPS:
			ok = ok && len(p.Runs) > 0
		}
		return v, ok
	}
	return 0, false
}

// checkFixed checks the types of a decoded point's fixed fields: a number
// each, but cv_above_max (true or false) and run_sds_ms (numbers).
func checkFixed(p *SweepPoint) (field string, ok bool) {
	for i := range SweepFixedFields {
		f := &SweepFixedFields[i]
		if f.Object == "" {
			continue // the point's own fields, decoded by their Go types
		}
		v, present := p.object(f.Object)[f.Name]
		if !present {
			continue
		}
		ok = false
		switch v := v.(type) {
		case float64:
			ok = f.Name != "cv_above_max" && f.Name != "run_sds_ms"
		case bool:
			ok = f.Name == "cv_above_max"
		case []any:
			ok = f.Name == "run_sds_ms" && len(p.object(f.Object).Floats(f.Name)) == len(v)
		}
		if !ok {
			return "." + f.Object + "." + f.Name, false
		}
	}
	return "", true
}

// SetFigure sets the point's catalog figure of that key (removes it when
// !ok). A point without "figures" (a version 1 document's) first gets them
// from its fixed fields, so that Figure reads every figure from there.
func (p *SweepPoint) SetFigure(key string, v float64, ok bool) {
	if len(p.Figures) == 0 {
		for i := range Catalog {
			if x, has := p.fixedFigure(Catalog[i].Key); has {
				p.Figures = append(p.Figures, FigureValue{Key: Catalog[i].Key, Value: x})
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
		out = append(out, FigureValue{Key: key, Value: v})
	}
	p.Figures = out
}
