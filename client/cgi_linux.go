//go:build linux

package client

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func cgiSupported() error { return nil }

var (
	devNullOnce sync.Once
	devNull     *os.File // shared stdin/stderr of the programs, opened once per process
	devNullFd   int
	devNullErr  error
	reaperErr   error
)

// cgiPrepareProcess opens /dev/null and makes gab a child subreaper, so that
// the descendants of a killed program are re-parented to gab, which reaps
// them, rather than to an init that may never do so.
func cgiPrepareProcess() error {
	devNullOnce.Do(func() {
		devNull, devNullErr = os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if devNullErr == nil {
			devNullFd = int(devNull.Fd())
		}
		const prSetChildSubreaper = 36
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
			reaperErr = e // not fatal: orphans then go to init
		}
	})
	if devNullErr != nil {
		return &FatalError{Message: fmt.Sprintf("gab: %v\n", devNullErr), Exit: 1, Err: devNullErr}
	}
	return nil
}

// Why a program was killed.
const (
	killNone = iota
	killStop
	killTimeout
	killMalformed // the output cannot be a response (an over-long or malformed head)
)

// cgiProc is one running program. Its Close (called by a stopping run through
// tally.setConn) kills its whole process group.
type cgiProc struct {
	pid    int
	pidfd  int // a pidfd for the program (readable once it exits), or -1
	stdout *os.File
	stdin  *os.File // nil without a body

	mu     sync.Mutex
	reaped bool
	why    int // killNone, killStop, killTimeout or killMalformed; set under mu
}

func (p *cgiProc) Close() error {
	p.kill(killStop)
	return nil
}

// kill ends the program's process group, unless it has been reaped already
// (then its pid may belong to someone else).
func (p *cgiProc) kill(why int) {
	p.mu.Lock()
	if p.reaped {
		p.mu.Unlock()
		return
	}
	if p.why == killNone {
		p.why = why
	}
	_ = syscall.Kill(-p.pid, syscall.SIGKILL) // ESRCH: already gone
	p.mu.Unlock()
	// Something outside the group may still hold the pipes open.
	past := time.Unix(1, 0)
	_ = p.stdout.SetReadDeadline(past) // an error means the worker closed it already
	if p.stdin != nil {
		_ = p.stdin.SetWriteDeadline(past)
	}
}

// pipe returns a close-on-exec pipe whose parent end is pollable (so a
// deadline can interrupt it) and whose child end stays blocking for the program.
func pipe(parentReads bool) (parent *os.File, child int, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, -1, os.NewSyscallError("pipe2", err)
	}
	p, c := fds[1], fds[0]
	if parentReads {
		p, c = fds[0], fds[1]
	}
	if err := syscall.SetNonblock(p, true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, -1, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(p), "cgi-pipe"), c, nil
}

// spawn starts the program in its own process group. It returns once the
// program is executing (ForkExec waits for the exec).
func (tr *cgiTransport) spawn() (*cgiProc, error) {
	stdout, outChild, err := pipe(true)
	if err != nil {
		return nil, err
	}
	in := devNullFd
	var stdin *os.File
	if tr.hasBody {
		var inChild int
		stdin, inChild, err = pipe(false)
		if err != nil {
			stdout.Close()
			syscall.Close(outChild)
			return nil, err
		}
		in = inChild
	}
	errFd := devNullFd
	if tr.cfg.Verbosity >= 2 {
		errFd = 2 // let the program's complaints through when debugging
	}
	pid, err := syscall.ForkExec(tr.path, tr.argv, &syscall.ProcAttr{
		Dir:   tr.dir,
		Env:   tr.env,
		Files: []uintptr{uintptr(in), uintptr(outChild), uintptr(errFd)},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	syscall.Close(outChild)
	if stdin != nil {
		syscall.Close(in)
	}
	if err != nil {
		stdout.Close()
		if stdin != nil {
			stdin.Close()
		}
		return nil, &os.PathError{Op: "fork/exec", Path: tr.path, Err: err}
	}
	pidfd, err := unix.PidfdOpen(pid, 0) // close-on-exec always
	if err != nil {
		pidfd = -1 // an older kernel: no lingering, as before
	}
	return &cgiProc{pid: pid, pidfd: pidfd, stdout: stdout, stdin: stdin}, nil
}

// reap waits for the program's exit, kills what is left of its process group,
// and collects the exit status and rusage. The leader is killed-and-reaped in
// that order so that its pid, which names the group, cannot be reused meanwhile.
func (p *cgiProc) reap() (syscall.WaitStatus, syscall.Rusage, int) {
	var info [128]byte // siginfo_t, unused
	for {
		const pPID, wNOWAIT = 1, 0x1000000
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(p.pid),
			uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNOWAIT, 0, 0)
		if e != syscall.EINTR {
			break
		}
	}
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	p.mu.Lock()
	_ = syscall.Kill(-p.pid, syscall.SIGKILL) // stragglers; the leader is a zombie now
	for {
		_, err := syscall.Wait4(p.pid, &ws, 0, &ru)
		if err != syscall.EINTR {
			break
		}
	}
	p.reaped = true
	why := p.why
	if p.pidfd >= 0 {
		_ = unix.Close(p.pidfd)
		p.pidfd = -1
	}
	p.mu.Unlock()
	p.reapGroup()
	return ws, ru, why
}

// reapGroup waits until no process of the group is left, reaping those that
// were re-parented to gab. Usually the group is empty at once.
func (p *cgiProc) reapGroup() {
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(-p.pid, 0) != syscall.ESRCH && time.Now().Before(deadline) {
		_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-p.pid, &ws, syscall.WNOHANG, nil)
			if pid <= 0 && err != syscall.EINTR {
				break
			}
		}
		if reaperErr != nil {
			return // orphans belong to init: nothing more gab can do
		}
		time.Sleep(time.Millisecond)
	}
}

// do runs one request and returns its outcome (owned by the worker): it
// spawns the program, writes its stdin, reads its output, ends the request
// (reaping the program now or in the background) and classifies the outcome.
func (w *cgiWorker) do(r *run, t *tally) *outcome {
	tr := w.tr
	o := &w.out
	*o = outcome{CGI: &w.phases}
	w.phases = cgiSample{}
	o.Start = r.clock()
	p, err := tr.spawn()
	if err != nil {
		o.End = r.clock()
		o.Class, o.Err = failConnect, err
		return o
	}
	o.TCPDone = r.clock()
	o.Connect = o.TCPDone
	t.activity.Store(o.Connect)
	t.setConn(r, p) // false: the run stopped and p is being killed; go on and reap it
	var timer *time.Timer
	if d := tr.cfg.RequestTimeout; d > 0 {
		timer = time.AfterFunc(d-time.Duration(o.Connect-o.Start), func() { p.kill(killTimeout) })
	}
	wrote := w.writeBody(r, t, p)
	readErr := w.readOutput(r, t, p)
	eof := r.clock()
	p.stdout.Close()
	if o.FirstByte == 0 {
		o.FirstByte = eof
	}
	ws, why := w.end(r, t, p, eof, wrote, timer)
	w.response(r, t)
	w.classify(ws, why, readErr)
	return o
}

// writeBody gives the program its stdin: the body, then EOF. A small body
// fits in the empty pipe at once; a large one is written concurrently, so that
// a program that writes before it reads cannot deadlock with gab: the bytes
// it wrote then come on the channel returned (nil otherwise).
func (w *cgiWorker) writeBody(r *run, t *tally, p *cgiProc) (wrote chan int64) {
	o, body := &w.out, w.tr.body
	switch {
	case p.stdin == nil:
		o.WriteEnd = o.Connect
	case len(body) <= 4096:
		n, _ := p.stdin.Write(body) // EPIPE: the program did not read it
		t.TotalSent += int64(n)
		p.stdin.Close()
		o.WriteEnd = r.clock()
	default:
		wrote = make(chan int64, 1)
		go func() {
			n, _ := p.stdin.Write(body)
			p.stdin.Close()
			o.WriteEnd = r.clock()
			wrote <- int64(n)
		}()
	}
	return wrote
}

// readOutput reads the program's stdout into the parser until EOF, an error
// (returned, EOF aside), the run's stop or a malformed head.
//
// Reading from a peer (docs/DESIGN.md): one read of at most len(w.buf) per
// turn, the stop flag checked and activity noted at each, and the header block
// capped by the parser. A head that cannot be a response (over cgiMaxHead, or
// malformed) ends the request at once: the group is killed rather than read
// for ever.
func (w *cgiWorker) readOutput(r *run, t *tally, p *cgiProc) error {
	o := &w.out
	w.parser.reset()
	for {
		if r.isStopped() {
			p.kill(killStop)
			return nil
		}
		n, err := p.stdout.Read(w.buf)
		if n > 0 {
			now := r.clock()
			if o.FirstByte == 0 {
				o.FirstByte = now
			}
			t.activity.Store(now)
			t.TotalRead += int64(n)
			w.parser.feed(w.buf[:n])
			if w.parser.err != nil {
				p.kill(killMalformed)
				return nil
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// end ends the request once its output has ended (at eof) and fills in its
// phases. The response ends at the output's end, as a web server ends it. A
// program that has exited by cgiLinger is reaped here (Reap is part of the
// request's Total); one that goes on running is reaped in the background, and
// the request ends at the EOF. It returns the program's exit status (zero if
// it is reaped later) and why gab killed it, if it did.
func (w *cgiWorker) end(r *run, t *tally, p *cgiProc, eof int64, wrote chan int64, timer *time.Timer) (syscall.WaitStatus, int) {
	o := &w.out
	exited := p.exitedWithin(cgiLinger)
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	why := killNone
	if exited {
		ws, ru, why = p.reap()
		o.End = r.clock()
	} else {
		o.End = eof
		if p.stdin != nil {
			_ = p.stdin.SetWriteDeadline(time.Unix(1, 0)) // the body's writer gives up now
		}
	}
	if wrote != nil { // the group is gone (or the writer stopped), so a blocked writer has returned
		t.TotalSent += <-wrote
	}
	t.setConn(r, nil)

	w.phases = cgiSample{
		Spawn:     usec(o.Connect - o.Start),
		FirstByte: usec(o.FirstByte - o.Connect),
		Output:    usec(eof - o.FirstByte),
		Reap:      usec(o.End - eof),
		ChildCPU:  usec((ru.Utime.Nano() + ru.Stime.Nano())),
	}
	if exited {
		if timer != nil {
			timer.Stop()
		}
	} else {
		w.phases.late = w.reapLater(r, p, eof, timer)
		p.mu.Lock()
		why = p.why // killed while the output ended (stop, --request-timeout)
		p.mu.Unlock()
	}
	return ws, why
}

// response reads the response out of the parser: status, body, the Server
// header, and -v 2's events.
func (w *cgiWorker) response(r *run, t *tally) {
	o := &w.out
	w.parser.finish()
	o.Status = w.parser.status
	o.Body = w.parser.body
	t.BodyRead += w.parser.body
	if w.parser.hasServer && r.wantServer() {
		r.setServer(w.parser.server)
	}
	if w.tr.cfg.Verbosity >= 2 && w.parser.headLen > 0 {
		r.events.HeaderReceived(w.parser.head[:w.parser.headLen])
		r.events.Status(o.Status)
	}
}

// classify sets the outcome's class: abandoned if the run stopped it, an
// exception if gab killed the program, the program failed, or its output
// could not be read or parsed.
func (w *cgiWorker) classify(ws syscall.WaitStatus, why int, readErr error) {
	o := &w.out
	switch {
	case why == killStop:
		o.Class = failAbandoned
	case why == killTimeout:
		o.Class, o.Err = failException, fmt.Errorf("killed after --request-timeout %v", w.tr.cfg.RequestTimeout)
	case why == killMalformed:
		o.Class, o.Err = failException, w.parser.err
	case ws.Signaled():
		o.Class, o.Err = failException, fmt.Errorf("program killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	case ws.Exited() && ws.ExitStatus() != 0:
		o.Class, o.Err = failException, fmt.Errorf("program exited with status %d", ws.ExitStatus())
	case readErr != nil:
		o.Class, o.Err = failException, readErr
	case w.parser.err != nil:
		o.Class, o.Err = failException, w.parser.err
	}
}

// cgiLinger is how long a request waits, after its program's output ended,
// for the program to exit. A program that closes stdout and goes on running
// (work after the response, a daemon it started) does not hold the request
// longer: its response ends at the EOF and it is reaped in the background.
var cgiLinger = time.Second

// reapLater reaps p in the background, once it exits or the run stops and
// kills it, and fills in its request's Reap and ChildCPU then.
func (w *cgiWorker) reapLater(r *run, p *cgiProc, eof int64, timer *time.Timer) *cgiLate {
	late := &cgiLate{idx: -1}
	w.tr.addLingerer(p)
	w.lingering.Add(1)
	go func() {
		defer w.lingering.Done()
		_, ru, _ := p.reap()
		end := r.clock()
		if timer != nil {
			timer.Stop()
		}
		w.tr.dropLingerer(p)
		late.exited(usec(end-eof), usec(ru.Utime.Nano()+ru.Stime.Nano()))
	}()
	return late
}

// exitedWithin reports whether the program exits within d (it is not reaped
// yet). Without a pidfd (kernels before 5.3) it reports true: the caller
// then waits for the exit, as it always did.
func (p *cgiProc) exitedWithin(d time.Duration) bool {
	if p.pidfd < 0 {
		return true
	}
	fds := []unix.PollFd{{Fd: int32(p.pidfd), Events: unix.POLLIN}}
	deadline := time.Now().Add(d)
	for {
		ms := int(time.Until(deadline) / time.Millisecond)
		n, err := unix.Poll(fds, max(ms, 0))
		switch {
		case err == unix.EINTR && ms > 0:
			continue
		case err != nil:
			return true // cannot tell: wait for the exit
		}
		return n > 0
	}
}
