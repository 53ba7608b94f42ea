package report

import (
	"strconv"

	"gab/client"
	"gab/internal/samples"
)

// This file is the requests still in flight when a run stopped (-t, SIGINT,
// -s; client.Result.Outstanding): sent and never answered. ab counts them
// nowhere, and neither do its tables here; gab's own latency figures count
// each as a latency of its age at the stop, which its real latency is at
// least, and one older than -s as failed:
//
//   - the catalog's latency figures (mean, sd, min, max, p50 … p99.9: the
//     --extended figure block, the JSON document's "figures", the HTML
//     report, gab compare, gab sweep) are those of the completed requests'
//     total times and the outstanding requests' ages together (each of
//     them but sd a lower bound of the figure over every request sent), and
//     the catalog's failed adds the ones older than -s;
//   - --fail-if's latency metrics, failed and its percentage read the same
//     (exact: the ages are kept to the µs);
//   - rate mode's corrected figures (rate.corrected and its tables) count
//     each from its intended send time;
//   - the client-bound rule's busy share counts their time on their
//     connections.
//
// ab's report, the -e and -g files, --percentiles' table (the requests
// served), the phase breakdown and the sums stay the completed requests'.

// outstandingFigures are a run's requests in flight at the stop.
type outstandingFigures struct {
	// Requests is how many were in flight.
	Requests int64 `json:"requests"`
	// Failed is how many of them were older than -s (TimeoutS) at the stop:
	// gab's figures count them as failed requests.
	Failed int64 `json:"failed"`
	// TimeoutS is -s in seconds (0: none).
	TimeoutS float64 `json:"timeout_s"`
	// Age is their ages at the stop in µs, from each one's start as ab's
	// Total column counts it.
	Age distFigures `json:"age"`
	// CorrectedAge is their ages from their intended send times (rate mode
	// only; absent otherwise).
	CorrectedAge *distFigures `json:"corrected_age,omitempty"`
}

// outstandingOf gathers the run's requests in flight at the stop (nil when
// there were none).
func outstandingOf(res *client.Result, rate bool) *outstandingFigures {
	if len(res.Outstanding) == 0 {
		return nil
	}
	o := &outstandingFigures{Requests: int64(len(res.Outstanding))}
	if res.Timeout > 0 {
		o.TimeoutS = res.Timeout.Seconds()
	}
	age, cor := samples.NewDist(), samples.NewDist()
	for _, f := range res.Outstanding {
		age.Add(f.Age.Microseconds())
		cor.Add(f.Corrected.Microseconds())
		if res.Timeout > 0 && f.Age > res.Timeout {
			o.Failed++
		}
	}
	o.Age = distOf(&age)
	if rate {
		c := distOf(&cor)
		o.CorrectedAge = &c
	}
	return o
}

// outstandingFailed is how many of them count as failed.
func (r *Run) outstandingFailed() int64 {
	if r.Outstanding == nil {
		return 0
	}
	return r.Outstanding.Failed
}

// latencyWithOutstanding is the distribution of the catalog's latency
// figures when the run left requests in flight: the completed requests'
// total times (totalDist) and the
// outstanding requests' ages. ok is false when there were none, or when
// the run keeps no histogram of its total times.
func latencyWithOutstanding(d *Run) (samples.Dist, bool) {
	o := d.Outstanding
	if o == nil || o.Requests == 0 {
		return samples.Dist{}, false
	}
	ages := o.Age.decoded()
	if ages == nil {
		return samples.Dist{}, false
	}
	out := samples.NewDist()
	if d.Sums == nil && d.Extended == nil {
		return samples.Dist{}, false
	}
	if base, ok := totalDist(d); ok {
		if sd, ok := sdCompleted(d); ok { // the exact sd from the sums
			base = samples.DistOf(base.Count, base.Min, base.Max, base.Sum, sd*1000, base.Hist)
		}
		out.Merge(&base)
	} else if (d.Sums != nil && d.Sums.Total.Count > 0) || (d.Extended != nil && d.Extended.Phases.Total.Count > 0) {
		return samples.Dist{}, false // requests completed, but no histogram of them
	}
	out.Merge(ages)
	return out, true
}

// mergeOutstanding merges the runs' sections (none when no run has one).
func (mg *merging) outstanding() *outstandingFigures {
	var ages, cors []*distFigures
	out := &outstandingFigures{}
	rate := true
	for _, i := range mg.order {
		o := mg.runs[i].Outstanding
		if o == nil {
			continue
		}
		out.Requests += o.Requests
		out.Failed += o.Failed
		out.TimeoutS = max(out.TimeoutS, o.TimeoutS)
		ages = append(ages, &o.Age)
		if o.CorrectedAge != nil {
			cors = append(cors, o.CorrectedAge)
		} else {
			rate = false
		}
	}
	if out.Requests == 0 {
		return nil
	}
	out.Age, _ = mergeDists(ages)
	if rate && len(cors) > 0 {
		c, _ := mergeDists(cors)
		out.CorrectedAge = &c
	}
	return out
}

// writeOutstanding says how many requests the run left in flight, their
// ages and how gab's figures count them (nothing when none): in the
// extended report from their starts, with the failed ones; in rate mode's
// corrected section (corrected) from their intended send times.
func writeOutstanding(p *errWriter, r *Run, corrected bool) {
	o := r.Outstanding
	if o == nil || o.Requests == 0 {
		return
	}
	a, since, what, failed := &o.Age, "started", "the figures below (not the phase table)", ""
	if corrected {
		a, since, what = o.CorrectedAge, "due", "the corrected times below"
		if a == nil {
			return
		}
	} else if o.TimeoutS > 0 {
		failed = ", and the " + strconv.FormatInt(o.Failed, 10) + " older than -s (" + decimal(o.TimeoutS) + " s) as failed"
	}
	n := strconv.FormatInt(o.Requests, 10) + " requests"
	if o.Requests == 1 {
		n = "1 request"
	}
	p.printf("In flight at the stop:  %s unanswered when the run stopped, %s %s to %s [ms] before it: %s count each as a latency of that age (a lower bound)%s\n",
		n, since, ms3(float64(a.MinUs)), ms3(float64(a.MaxUs)), what, failed)
}
