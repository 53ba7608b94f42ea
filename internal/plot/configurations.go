package plot

import (
	"fmt"
	"gab/report"
	"sort"

	"gab/internal/sweep"
)

// Configurations joins several sweeps, each a configuration of one
// study, into one document: every target becomes LABEL:target (LABEL the
// input's), the lists are the union of the sweeps' (sizes by bytes), and
// where the sweeps' size options differ each point's bandwidth is the one
// that grows with its size (received for --sizes, sent for --post-sizes).
// The rankings are each sweep's own and are left out.
func Configurations(inputs []Input) (*report.SweepDocument, error) {
	first := inputs[0].Sweep
	d := &report.SweepDocument{Schema: first.Schema, SchemaVersion: first.SchemaVersion, Tool: first.Tool,
		StartTime: first.StartTime, EndTime: first.EndTime, Complete: true, Machine: first.Machine}
	d.Settings = first.Settings
	d.Settings.Targets, d.Settings.Sizes, d.Settings.Concurrency = nil, nil, nil
	seenLabel, seenSize, seenConc := map[string]bool{}, map[int64]bool{}, map[int]bool{}
	mixed := false
	for _, in := range inputs {
		if seenLabel[in.Label] {
			return nil, fmt.Errorf("two sweeps are labelled %q: give them LABEL=FILE", in.Label)
		}
		seenLabel[in.Label] = true
		sw := in.Sweep
		d.CommandLine = append(d.CommandLine, in.Label+"="+in.Path)
		d.Complete = d.Complete && sw.Complete
		mixed = mixed || sw.Settings.SizeOption != first.Settings.SizeOption
		if sw.Settings.Repeat != first.Settings.Repeat {
			d.Settings.Repeat = min(d.Settings.Repeat, sw.Settings.Repeat)
		}
		if q := sw.Settings.Param; q == nil || first.Settings.Param == nil || q.Name != first.Settings.Param.Name {
			d.Settings.Param = nil
		}
		for _, t := range sw.Settings.Targets {
			t.Label = in.Label + ":" + t.Label
			d.Settings.Targets = append(d.Settings.Targets, t)
		}
		for _, sz := range sw.Settings.Sizes {
			if !seenSize[sz.Bytes] {
				seenSize[sz.Bytes] = true
				d.Settings.Sizes = append(d.Settings.Sizes, sz)
			}
		}
		for _, c := range sw.Settings.Concurrency {
			if !seenConc[c] {
				seenConc[c] = true
				d.Settings.Concurrency = append(d.Settings.Concurrency, c)
			}
		}
		for _, p := range sw.Points {
			p.Label = in.Label + ":" + p.Label
			if sw.Settings.SizeOption == "--post-sizes" {
				p.SetFigure("received_mbit_per_s", figure(&p, "sent_mbit_per_s"), true)
			}
			d.Points = append(d.Points, p)
		}
	}
	if len(d.Settings.Targets) > sweep.MaxListLength {
		return nil, fmt.Errorf("%d targets in the sweeps together, at most %d", len(d.Settings.Targets), sweep.MaxListLength)
	}
	sort.SliceStable(d.Settings.Sizes, func(i, j int) bool { return d.Settings.Sizes[i].Bytes < d.Settings.Sizes[j].Bytes })
	sort.Ints(d.Settings.Concurrency)
	if mixed {
		d.Settings.SizeOption = sizeOptionMixed
	} else if d.Settings.SizeOption == "--post-sizes" {
		for i := range d.Points {
			p := &d.Points[i] // as a --post-sizes sweep's own chart
			p.SetFigure("received_mbit_per_s", figure(p, "sent_mbit_per_s"), true)
		}
		d.Settings.SizeOption = sizeOptionMixed
	}
	if d.Settings.Param == nil {
		for i := range d.Points {
			d.Points[i].ParamValue = ""
		}
	}
	d.Rankings = nil
	return d, nil
}

// sizeOptionMixed is the size option of configurations whose sweeps' size
// options differ (or are all --post-sizes): each point's bandwidth is then
// already the direction that grows.
const sizeOptionMixed = "--sizes or --post-sizes"
