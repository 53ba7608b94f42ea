package main

import (
	"path/filepath"
	"testing"
	"time"

	"gab/report"
)

// TestSweepRampLeftOut: gab sweep --ramp leaves the ramp-up's requests out
// of each run's figures with their bytes and the client's CPU, so that 5
// measured requests carry 5 documents' bytes and a CPU time the machine's
// cores can give in the run's time (its documents pass gab's own check),
// and the document says how many requests the ramp-up sent.
func TestSweepRampLeftOut(t *testing.T) {
	url, _ := startDocServer(t)
	js := filepath.Join(t.TempDir(), "s.json")
	before := report.ProcessCPU()
	status, _, errs := runGab(t, "gab", "sweep", "-n", "5", "-c", "2", "--ramp", "500ms", "--json", js, url+"/")
	all := report.ProcessCPU().Sub(before)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	doc := readSweepDoc(t, js)
	if len(doc.Points) != 1 || len(doc.Points[0].Runs) != 1 {
		t.Fatalf("%d points", len(doc.Points))
	}
	d := doc.Points[0].Runs[0].Document
	if err := report.ValidateDocument(d); err != nil {
		t.Errorf("the run's document is refused: %v", err)
	}
	if r := d.Report; r.CompleteRequests != 5 || r.HTMLTransferredBytes != 500 {
		t.Errorf("%d requests carried %d body bytes, want 5 and 500", r.CompleteRequests, r.HTMLTransferredBytes)
	}
	// The ramp-up sends as fast as the server answers for 500 ms, the run 5
	// requests: most of the sweep's CPU is the ramp-up's.
	if c := d.Extended.ClientCPU; c == nil || !all.Known || time.Duration((c.UserMs+c.SysMs)*1e6) > (all.User+all.Sys)/2 {
		t.Errorf("the run's client CPU %+v, of %v for the whole sweep (the ramp-up's included)", c, all.User+all.Sys)
	}
	if d.RampUp == nil || d.RampUp.Requests == 0 || d.RampUp.TimeS != 0.5 {
		t.Errorf("ramp_up %+v, want its requests in 0.5 s", d.RampUp)
	}
}
