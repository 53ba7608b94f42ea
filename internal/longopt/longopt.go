// Package longopt is the values of gab's long options that are more than a
// number or a word: durations (a Go duration or plain seconds), --ranges,
// --apdex, --warmup, --percentiles and --rate's schedule. Each is a
// pflag.Value, or a parser, whose error says what it wants.
package longopt

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gab/client"
	"gab/report"
)

// Duration accepts a Go duration ("1.5s", "200ms") or plain seconds ("2", "0.5").
type Duration time.Duration

func (d *Duration) String() string {
	if *d == 0 {
		return ""
	}
	return time.Duration(*d).String()
}
func (d *Duration) Type() string { return "duration" }
func (d *Duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		switch {
		case ferr != nil && !errors.Is(ferr, strconv.ErrRange), math.IsNaN(secs):
			return errors.New("not a duration (1.5s, 200ms) or a number of seconds")
		case math.Abs(secs) > math.MaxInt64/float64(time.Second):
			return errors.New("too long (at most 2540400h)")
		}
		v = time.Duration(secs * float64(time.Second))
	}
	if v < 0 {
		return errors.New("a negative duration")
	}
	*d = Duration(v)
	return nil
}

// Ranges is --ranges: ascending durations, at most 10.
type Ranges []time.Duration

func (r *Ranges) String() string {
	var parts []string
	for _, d := range *r {
		parts = append(parts, d.String())
	}
	return strings.Join(parts, ",")
}
func (r *Ranges) Type() string { return "LIST" }
func (r *Ranges) Set(s string) error {
	var out Ranges
	for _, part := range strings.Split(s, ",") {
		var d Duration
		if err := d.Set(strings.TrimSpace(part)); err != nil {
			return err
		}
		if d <= 0 || len(out) > 0 && time.Duration(d) <= out[len(out)-1] {
			return errors.New("the edges must be above 0 and ascending")
		}
		out = append(out, time.Duration(d))
	}
	if len(out) > 10 {
		return errors.New("at most 10 edges")
	}
	*r = out
	return nil
}

// Apdex is --apdex T[,F]: two durations, 0 < T < F.
type Apdex struct{ T, F time.Duration }

func (a *Apdex) String() string {
	if a.T == 0 {
		return ""
	}
	return a.T.String() + "," + a.F.String()
}
func (a *Apdex) Type() string { return "T[,F]" }
func (a *Apdex) Set(s string) error {
	ts, fs, two := strings.Cut(s, ",")
	var t, f Duration
	if err := t.Set(ts); err != nil {
		return err
	}
	f = 4 * t
	if two {
		if err := f.Set(fs); err != nil {
			return err
		}
	}
	if t <= 0 || f <= t {
		return errors.New("T must be above 0 and F above T")
	}
	a.T, a.F = time.Duration(t), time.Duration(f)
	return nil
}

// Warmup is --warmup: a number of requests ("500") or a duration
// ("10s", "1.5m").
type Warmup struct {
	Requests int
	Time     time.Duration
}

func (w *Warmup) String() string {
	switch {
	case w.Requests > 0:
		return strconv.Itoa(w.Requests)
	case w.Time > 0:
		return w.Time.String()
	}
	return ""
}
func (w *Warmup) Type() string { return "N|DURATION" }
func (w *Warmup) Set(s string) error {
	*w = Warmup{}
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 || n > math.MaxInt32 {
			return fmt.Errorf("a number of requests from 1 to %d", math.MaxInt32)
		}
		w.Requests = n
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return errors.New("a number of requests or a positive duration with its unit (10s, 500ms)")
	}
	w.Time = d
	return nil
}

// Percentiles is a comma-separated list of percentiles (report.ParsePercentiles).
type Percentiles []float64

func (p *Percentiles) String() string {
	parts := make([]string, len(*p))
	for i, v := range *p {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}
func (p *Percentiles) Type() string { return "list" }
func (p *Percentiles) Set(s string) error {
	out, err := report.ParsePercentiles(s)
	if err != nil {
		return err
	}
	*p = out
	return nil
}

// defaultStep is a --rate list's step length without --step.
const defaultStep = 10 * time.Second

// maxSchedule bounds a --rate schedule's length, as -t's is bounded (ab's
// int seconds).
const maxSchedule = math.MaxInt32 * time.Second

// RateRange is the range every rate of --rate must be in: client.MinRate to
// client.MaxRate.
const RateRange = "from 0.001 to 1e9 requests per second"

// ParseRate reads --rate: R (a constant rate), FROM:TO/DURATION (a linear
// ramp) or R1,R2,... (steps of step each; stepGiven: --step was given). rate
// is the highest rate asked for; phases is nil for a constant. Every rate is
// within client.MinRate and client.MaxRate, and the schedule lasts at most
// maxSchedule.
func ParseRate(s string, step time.Duration, stepGiven bool) (rate float64, phases []client.RatePhase, err error) {
	bad := func(why string) error { return fmt.Errorf("--rate %q: %s", s, why) }
	number := func(v string) (float64, bool) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil && f > 0 && !math.IsInf(f, 0)
	}
	inRange := func(f float64) bool { return f >= client.MinRate && f <= client.MaxRate }
	switch {
	case strings.Contains(s, ":"):
		if stepGiven {
			return 0, nil, errors.New("--step is for a --rate list, not a ramp (FROM:TO/DURATION)")
		}
		rates, length, ok := strings.Cut(s, "/")
		from, to, _ := strings.Cut(rates, ":")
		a, okA := number(from)
		b, okB := number(to)
		var d Duration
		if !ok || !okA || !okB || d.Set(strings.TrimSpace(length)) != nil || d == 0 {
			return 0, nil, bad("a ramp is FROM:TO/DURATION with positive rates and a duration (100:5000/60s)")
		}
		if !inRange(a) || !inRange(b) {
			return 0, nil, bad("a ramp's rates must be " + RateRange)
		}
		if time.Duration(d) > maxSchedule {
			return 0, nil, bad(fmt.Sprintf("a ramp lasts at most %v", maxSchedule))
		}
		return max(a, b), []client.RatePhase{{From: a, To: b, For: time.Duration(d)}}, nil
	case strings.Contains(s, ","):
		if !stepGiven {
			step = defaultStep
		}
		if step <= 0 {
			return 0, nil, errors.New("--step must be a positive duration")
		}
		parts := strings.Split(s, ",")
		if len(parts) > client.MaxRatePhases {
			return 0, nil, bad(fmt.Sprintf("at most %d steps", client.MaxRatePhases))
		}
		if step > maxSchedule/time.Duration(len(parts)) {
			return 0, nil, fmt.Errorf("--step %v: %d steps last more than %v", step, len(parts), maxSchedule)
		}
		for _, p := range parts {
			r, ok := number(p)
			if !ok {
				return 0, nil, bad("every step must be a positive number of requests per second")
			}
			if !inRange(r) {
				return 0, nil, bad("every step must be " + RateRange)
			}
			rate = max(rate, r)
			phases = append(phases, client.RatePhase{From: r, To: r, For: step})
		}
		return rate, phases, nil
	}
	if stepGiven {
		return 0, nil, errors.New("--step needs a --rate list (--rate 1000,2000,4000 --step 10s)")
	}
	r, ok := number(s)
	if !ok {
		return 0, nil, errors.New("--rate must be a positive number of requests per second")
	}
	if !inRange(r) {
		return 0, nil, fmt.Errorf("--rate %s: the rate must be %s", strings.TrimSpace(s), RateRange)
	}
	return r, nil, nil
}
