package report

import (
	"strings"
	"testing"
)

// TestValidateRefusesImpossibleBytesAndCPU: a completed run whose responses
// carried more body bytes than its document length allows (a ramp-up's
// bytes charged to 5 requests: 400 KB of 100-byte documents), or whose
// client used more CPU than its cores give over the run (the ramp-up's CPU:
// 37,500 % of a core), is refused; what a run can produce is not.
func TestValidateRefusesImpossibleBytesAndCPU(t *testing.T) {
	fixture, _ := fixtureDocument(t)
	base := func() *Run {
		d := roundTrip(t, fixture) // 10 complete responses of 10000 bytes, 2.5 s, 2 s of CPU
		d.Report.Failures.Receive = 0
		d.Extended.FailuresByClass["receive"] = failureClass{}
		d.Environment = &environmentInfo{Cores: 2}
		return d
	}
	for _, c := range []struct {
		name, want string
		mutate     func(d *Run)
	}{
		{"as written", "", func(d *Run) {}},
		{"a body byte too many", "report.html_transferred_bytes: 100001, more than 10 complete responses of 10000 bytes", func(d *Run) {
			d.Report.HTMLTransferredBytes++
			d.Report.TotalTransferredBytes++
		}},
		{"a ramp-up's bytes on 5 requests", "report.html_transferred_bytes: 402000, more than 10 complete responses of 10000 bytes", func(d *Run) {
			d.Report.HTMLTransferredBytes, d.Report.TotalTransferredBytes = 402_000, 618_000
		}},
		{"requests in flight at -t's end", "", func(d *Run) {
			d.Ending = endTimeLimit
			d.Report.HTMLTransferredBytes += 5000
			d.Report.TotalTransferredBytes += 5000
		}},
		{"-l", "", func(d *Run) {
			d.Report.VariableLength = true
			d.Report.HTMLTransferredBytes *= 3
			d.Report.TotalTransferredBytes *= 3
		}},
		{"length failures", "", func(d *Run) {
			d.Report.Failures.Length, d.Report.FailedRequests = 2, d.Report.FailedRequests+2
			d.Extended.FailuresByClass["length"] = failureClass{Count: 2}
			d.Report.HTMLTransferredBytes += 70000
			d.Report.TotalTransferredBytes += 70000
		}},
		{"every core busy, and the set-up", "", func(d *Run) {
			d.Extended.ClientCPU.UserMs, d.Extended.ClientCPU.SysMs = 5000, 400 // 2 cores × 2.5 s + 0.4 s
		}},
		{"more CPU than 2 cores give", "extended.client_cpu: 5.600 s of CPU, more than the 2 core(s) of environment.cores give in time_taken_s 2.5", func(d *Run) {
			d.Extended.ClientCPU.UserMs, d.Extended.ClientCPU.SysMs = 5000, 600
		}},
		{"a ramp-up's CPU on a short run", "extended.client_cpu: 0.850 s of CPU", func(d *Run) {
			d.Report.TimeTakenUs, d.Report.TimeTakenS = 2300, 0.0023
			d.Report.RequestsPerSecond = 10 / 0.0023
			d.Extended.ClientCPU.UserMs, d.Extended.ClientCPU.SysMs = 600, 250
			d.Extended.ClientCPU.PercentOfOneCore, d.Extended.ClientCPU.CoresBusy = nil, nil
			d.Extended.Throughput.Intervals = 0
		}},
		{"no cores known", "", func(d *Run) {
			d.Environment = nil
			d.Extended.ClientCPU.UserMs = 50000
		}},
	} {
		d := base()
		c.mutate(d)
		err := ValidateDocument(roundTrip(t, d))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: want %q, got %v", c.name, c.want, err)
		}
	}
}
