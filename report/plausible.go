package report

import (
	"math/bits"
	"time"
)

// This file holds the document checks on figures no run can produce, beside
// validate.go's: a completed run whose responses carried more body bytes
// than its document length allows, a client that used more CPU than its
// machine's cores give over the run.

// cpuWindowSlack is how much longer than time_taken_s the client's CPU
// readings may span on each core: they also cover the run's preparation
// (name resolution, TLS set-up) and its end (stopping the workers, closing
// the connections, gathering the figures), a few ms on loopback.
const cpuWindowSlack = 250 * time.Millisecond

// plausible refuses figures no run can produce (see bodyBytes, clientCPU).
func (c *checker) plausible(d *Run) {
	r := d.Report
	if r == nil {
		return
	}
	if d.Ending == endCompleted {
		c.bodyBytes(r)
	}
	merged := d.Shard != nil && len(d.Shard.Merged) > 1 // several processes, maybe several machines
	if x := d.Extended; x != nil && x.ClientCPU != nil && d.Environment != nil && !merged {
		c.clientCPU(x.ClientCPU, r, d.Environment.Cores)
	}
}

// bodyBytes checks the body bytes of a completed run (nothing was in flight
// at its end): without -l every response that is not a length, receive or
// exception failure had document_length_bytes of body, so with none of those
// failures HTML transferred is at most that per complete request. Requests
// sent again (refused HTTP/2 and HTTP/3 streams, HTTP/1 requests on a closed
// keep-alive connection) never had a response, and a warm-up's or ramp-up's
// bytes are not the run's.
func (c *checker) bodyBytes(r *abReport) {
	f := r.Failures
	if r.VariableLength || f.Length > 0 || f.Receive > 0 || f.Exceptions > 0 || r.CompleteRequests <= 0 || r.DocumentLengthBytes < 0 {
		return
	}
	hi, most := bits.Mul64(uint64(r.CompleteRequests), uint64(r.DocumentLengthBytes))
	if hi == 0 && r.HTMLTransferredBytes > 0 && uint64(r.HTMLTransferredBytes) > most {
		c.fail("report.html_transferred_bytes", "%d, more than %d complete responses of %d bytes (document_length_bytes) carry",
			r.HTMLTransferredBytes, r.CompleteRequests, r.DocumentLengthBytes)
	}
}

// clientCPU checks that the client's CPU time (user and system) is one the
// machine's cores can give over the run: at most cores × (time_taken_s +
// cpuWindowSlack). A warm-up's and a ramp-up's CPU are not the run's.
func (c *checker) clientCPU(cpu *clientCPU, r *abReport, cores int) {
	if cores <= 0 {
		return
	}
	used := (cpu.UserMs + cpu.SysMs) / 1000
	if most := float64(cores) * (r.TimeTakenS + cpuWindowSlack.Seconds()); used > most {
		c.fail("extended.client_cpu", "%.3f s of CPU, more than the %d core(s) of environment.cores give in time_taken_s %g (with %v for the run's set-up and end): %.3f s",
			used, cores, r.TimeTakenS, cpuWindowSlack, most)
	}
}
