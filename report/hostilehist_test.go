package report

import (
	"strings"
	"testing"
)

// TestUnvalidatedHostileHistogramsRefused: the chart data of a document and
// the timeline merge decode histograms with samples.DecodeHist, so a header
// claiming more than gab's histograms hold is refused before its counts
// array is allocated, even in a record that was not checked first.
func TestUnvalidatedHostileHistogramsRefused(t *testing.T) {
	d := &Run{Report: &abReport{}, Extended: &extendedFigures{Phases: phaseDists{Total: distFigures{
		Histogram: &histogramData{Unit: "us", Encoding: histogramEncoding, Data: hostileHistogram}}}}}
	if _, err := DocumentChartData(d); err == nil || !strings.Contains(err.Error(), "claims") {
		t.Errorf("chart data of a hostile latency histogram: %v", err)
	}
	var a latencyAcc
	l := IntervalLatency{Histogram: histogramData{Unit: "us", Encoding: histogramEncoding, Data: hostileHistogram}}
	if err := a.add(1, l); err == nil || !strings.Contains(err.Error(), "claims") {
		t.Errorf("timeline merge of a hostile interval histogram: %v", err)
	}
}
