// Package headless opens a page in headless Chromium for tests and reports
// what a person opening it would notice: console errors, uncaught
// exceptions, failed requests, requests that left the machine, and what the
// page looks like (a screenshot). It speaks the DevTools protocol over
// Chromium's --remote-debugging-pipe (NUL-terminated JSON messages on file
// descriptors 3 and 4), so it needs no WebSocket and no module beyond the
// standard library.
package headless

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Flags are the Chromium options for a quiet, isolated, offline-friendly run.
var Flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
	"--remote-debugging-pipe",
}

// Report is what opening a page showed.
type Report struct {
	// Problems lists console errors and warnings, uncaught exceptions, log
	// entries of level error, and failed requests, one line each.
	Problems []string
	// Requests lists every URL the page requested (the page itself first).
	Requests []string
	// Screenshot is the rendered page.
	Screenshot image.Image
	// Title is document.title.
	Title string
	// Load is the time from the navigation to the load event.
	Load time.Duration
	// Eval is the value of Options.Eval (a string) after the load.
	Eval string
}

// Options are the settings of OpenWith.
type Options struct {
	Width, Height int
	// NoScript opens the page with JavaScript disabled.
	NoScript bool
	// Eval is a JavaScript expression evaluated after the load (even with
	// NoScript); its string value is Report.Eval.
	Eval string
}

type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct{ Message string }
	SessionID string `json:"sessionId,omitempty"`
}

type browser struct {
	w      *os.File
	mu     sync.Mutex
	next   int
	wait   map[int]chan message
	events chan message
}

// OpenWith loads url in a fresh Chromium (bin) with its own profile
// directory under dir, waits for the load event and a short settling time,
// and returns what happened. o.Width and o.Height are the window's size.
func OpenWith(ctx context.Context, bin, dir, url string, o Options) (*Report, error) {
	width, height := o.Width, o.Height
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	toChrome, ourEnd, err := os.Pipe() // Chromium reads fd 3
	if err != nil {
		return nil, err
	}
	fromChrome, chromeEnd, err := os.Pipe() // Chromium writes fd 4
	if err != nil {
		return nil, err
	}
	args := append(append([]string(nil), Flags...),
		"--user-data-dir="+dir, fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.ExtraFiles = []*os.File{toChrome, chromeEnd}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	toChrome.Close()
	chromeEnd.Close()
	defer func() {
		ourEnd.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()

	b := &browser{w: ourEnd, wait: map[int]chan message{}, events: make(chan message, 4096)}
	go b.read(fromChrome)

	s, err := b.attach(ctx, o, &stderr)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	if err := b.load(ctx, s, url, rep); err != nil {
		return nil, err
	}
	if err := b.capture(ctx, s, o, rep); err != nil {
		return nil, err
	}
	// Events that arrived while the title and screenshot were taken.
	for {
		select {
		case ev := <-b.events:
			if ev.SessionID == s {
				rep.note(ev)
			}
			continue
		default:
		}
		break
	}
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	return rep, nil
}

// attach opens a blank page and attaches to it, its runtime, log, network
// and page events on (scripts off with o.NoScript): the session's id. An
// error of the first call carries Chromium's last line of stderr.
func (b *browser) attach(ctx context.Context, o Options, stderr *bytes.Buffer) (string, error) {
	var target struct{ TargetID string }
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return "", fmt.Errorf("%w (chromium: %s)", err, lastLine(stderr.String()))
	}
	var att struct{ SessionID string }
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return "", err
	}
	s := att.SessionID
	for _, m := range []string{"Runtime.enable", "Log.enable", "Network.enable", "Page.enable"} {
		if err := b.call(ctx, s, m, nil, nil); err != nil {
			return "", err
		}
	}
	if o.NoScript {
		if err := b.call(ctx, s, "Emulation.setScriptExecutionDisabled", map[string]any{"value": true}, nil); err != nil {
			return "", err
		}
	}
	return s, nil
}

// load navigates session s to url and notes its events into rep until
// 500 ms after the load event (late console messages, lazy requests), or
// until ctx ends; rep.Load is the time to the load event.
func (b *browser) load(ctx context.Context, s, url string, rep *Report) error {
	navigated := time.Now()
	if err := b.call(ctx, s, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		return err
	}
	loaded := false
	settle := time.NewTimer(time.Hour)
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return fmt.Errorf("page did not finish loading: %w", ctx.Err())
		case <-settle.C:
			done = true
		case ev := <-b.events:
			if ev.SessionID != s {
				continue
			}
			rep.note(ev)
			if ev.Method == "Page.loadEventFired" && !loaded {
				loaded = true
				rep.Load = time.Since(navigated)
				settle.Reset(500 * time.Millisecond) // late console messages, lazy requests
			}
		}
	}
	return nil
}

// capture reads session s's title, o.Eval's value and a screenshot of the
// whole page into rep.
func (b *browser) capture(ctx context.Context, s string, o Options, rep *Report) error {
	var eval struct {
		Result struct{ Value string }
	}
	if err := b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true}, &eval); err != nil {
		return err
	}
	rep.Title = eval.Result.Value
	if o.Eval != "" {
		if err := b.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": o.Eval, "returnByValue": true}, &eval); err != nil {
			return err
		}
		rep.Eval = eval.Result.Value
	}
	var shot struct{ Data string }
	if err := b.call(ctx, s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return err
	}
	if rep.Screenshot, err = png.Decode(bytes.NewReader(raw)); err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	return nil
}

// note records what an event tells about the page.
func (r *Report) note(ev message) {
	var p struct {
		Type string
		Args []struct {
			Value       any
			Description string
		}
		ExceptionDetails struct {
			Text      string
			Exception struct{ Description string }
		}
		Entry struct {
			Level, Text, URL string
		}
		Request   struct{ URL string }
		ErrorText string
		Canceled  bool
	}
	json.Unmarshal(ev.Params, &p)
	switch ev.Method {
	case "Runtime.consoleAPICalled":
		if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
			var parts []string
			for _, a := range p.Args {
				if a.Value != nil {
					parts = append(parts, fmt.Sprint(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			r.Problems = append(r.Problems, "console."+p.Type+": "+strings.Join(parts, " "))
		}
	case "Runtime.exceptionThrown":
		r.Problems = append(r.Problems, "exception: "+p.ExceptionDetails.Text+" "+p.ExceptionDetails.Exception.Description)
	case "Log.entryAdded":
		if p.Entry.Level == "error" || p.Entry.Level == "warning" {
			r.Problems = append(r.Problems, "log "+p.Entry.Level+": "+p.Entry.Text+" "+p.Entry.URL)
		}
	case "Network.requestWillBeSent":
		r.Requests = append(r.Requests, p.Request.URL)
	case "Network.loadingFailed":
		r.Problems = append(r.Problems, "request failed: "+p.ErrorText)
	}
}

func (b *browser) read(f *os.File) {
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			for id, ch := range b.wait {
				close(ch)
				delete(b.wait, id)
			}
			b.mu.Unlock()
			return
		}
		var m message
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.wait[m.ID]
			delete(b.wait, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case b.events <- m:
		default: // a flood of events: the test reads what it needs
		}
	}
}

func (b *browser) call(ctx context.Context, session, method string, params any, result any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan message, 1)
	b.wait[id] = ch
	b.mu.Unlock()
	req := map[string]any{"id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	if session != "" {
		req["sessionId"] = session
	}
	raw, _ := json.Marshal(req)
	if _, err := b.w.Write(append(raw, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: chromium closed the pipe", method)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Blank reports whether img is one colour (nothing drawn), and the share of
// its pixels that differ from the top-left pixel.
func Blank(img image.Image) (bool, float64) {
	r := img.Bounds()
	bg := img.At(r.Min.X, r.Min.Y)
	br, bgc, bb, _ := bg.RGBA()
	diff, all := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if absDiff(cr, br) > 0x1000 || absDiff(cg, bgc) > 0x1000 || absDiff(cb, bb) > 0x1000 {
				diff++
			}
			all++
		}
	}
	if all == 0 {
		return true, 0
	}
	return diff == 0, float64(diff) / float64(all)
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
