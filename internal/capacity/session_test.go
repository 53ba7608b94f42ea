package capacity

import (
	"context"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
	"gab/report"
)

// fakeStep is a step's run at rate that kept it for a second, every
// request's corrected latency lat.
func fakeStep(rate float64, lat time.Duration) StepRun {
	n := int64(rate)
	res := &client.Result{Start: time.Now(), Elapsed: time.Second, Complete: int(n), StatusCounts: map[int]int{}, FirstError: map[string]string{}}
	x := &client.ExtraResult{}
	for p := range x.Phases {
		x.Phases[p] = samples.NewDist()
	}
	x.Rate = &client.RateResult{Target: rate, Sent: n, Corrected: samples.NewDist(), Lag: samples.NewDist()}
	for range n {
		x.Phases[client.PhaseTotal].Add(lat.Microseconds())
		x.Rate.Corrected.Add(lat.Microseconds())
	}
	res.Extra = x
	return StepRun{Result: res, Run: report.Summarize(res, report.Options{Concurrency: 2}), Wall: time.Second}
}

// session is a session of one target from gab capacity's arguments, whose
// steps' p99 is latency(k, rate) for its k-th step (from 0); it records
// the steps' rates.
func session(t *testing.T, args []string, latency func(k int, rate float64) time.Duration) (*Session, *[]float64, *strings.Builder) {
	t.Helper()
	var o Options
	var step, settle time.Duration
	fs := NewFlagSet(&o, durationFlag{&step}, durationFlag{&settle})
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	s, err := NewSettings(&o, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	ss := NewSession(s, []string{"a"}, []string{"http://127.0.0.1:1/"}, []client.Config{{}})
	var rates []float64
	log := &strings.Builder{}
	ss.Log = log
	ss.Measure = func(_ context.Context, _ int, cfg client.Config, _ string) StepRun {
		rates = append(rates, cfg.Rate)
		return fakeStep(cfg.Rate, latency(len(rates)-1, cfg.Rate))
	}
	return ss, &rates, log
}

// durationFlag is a pflag.Value over a duration, for the tests.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string { return "" }
func (f durationFlag) Type() string   { return "duration" }
func (f durationFlag) Set(s string) (err error) {
	*f.d, err = time.ParseDuration(s)
	return err
}

// By default a session measures the machine's latency noise first:
// DefaultNoise steps at a quarter of --start before any search step, and
// when the same low rate passes in some and fails in others it says the
// objective lies inside the noise and cannot be judged here (in the log,
// the document and the text). --noise 0 measures none.
func TestCapacityNoiseFirstByDefault(t *testing.T) {
	args := []string{"--slo", "p99<10ms", "--start", "100", "--max-rate", "100"}
	ss, rates, log := session(t, args, func(k int, rate float64) time.Duration {
		if k < DefaultNoise && k%2 == 1 {
			return 30 * time.Millisecond // a stall in the second noise step
		}
		return 2 * time.Millisecond
	})
	doc := ss.NewDocument([]string{"gab", "capacity"})
	if ss.Run(context.Background(), doc) {
		t.Fatal("interrupted")
	}
	if DefaultNoise < 2 || len(*rates) != DefaultNoise+1 {
		t.Fatalf("rates %v: want %d noise steps, then one at 100/s", *rates, DefaultNoise)
	}
	for i, r := range *rates {
		if want := map[bool]float64{true: 25, false: 100}[i < DefaultNoise]; r != want {
			t.Errorf("step %d at %v/s, want %v/s", i, r, want)
		}
	}
	n := doc.Targets[0].Noise
	if n == nil || !n.Inside || len(n.Steps) != DefaultNoise || n.P99MinUs != 2000 || n.P99MaxUs != 30000 {
		t.Fatalf("noise %+v", n)
	}
	var text strings.Builder
	if err := WriteText(&text, doc); err != nil {
		t.Fatal(err)
	}
	want := "p99 at 25.0 req/s ranged 2.000 to 30.000 ms over 3 steps: p99<10ms, failed<0.1%, non2xx<0.1% passed in some and failed in others: the objectives lie inside this machine's noise and cannot be judged here"
	if !strings.HasPrefix(log.String(), "a: latency noise: "+want+"\n") || !strings.Contains(text.String(), want) {
		t.Errorf("log:\n%s\ntext:\n%s", log, text.String())
	}

	ss, rates, _ = session(t, append(args, "--noise", "0"), func(int, float64) time.Duration { return 2 * time.Millisecond })
	doc = ss.NewDocument(nil)
	ss.Run(context.Background(), doc)
	if len(*rates) != 1 || (*rates)[0] != 100 || doc.Targets[0].Noise != nil {
		t.Errorf("--noise 0: rates %v, noise %+v", *rates, doc.Targets[0].Noise)
	}
}
