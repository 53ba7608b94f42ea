//go:build linux

package client

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// An io_uring instance on raw system calls (io_uring_setup, io_uring_enter,
// io_uring_register and the mmap of its rings), as the HTTP/1 io_uring
// engine (http1_uring_linux.go) uses it: one ring per event loop, its
// submissions queued during a turn and handed to the kernel with the turn's
// one io_uring_enter, which also waits for completions; receives are
// multishot and take their buffers from a provided-buffer ring registered
// with the kernel, so a connection costs no submission per response.
//
// No Go io_uring library is served by the module proxy here; the subset
// used (five opcodes, one buffer ring) fits in this file and allocates
// nothing after setup.

// The kernel's ABI (include/uapi/linux/io_uring.h).
const (
	sysIOUringSetup    = 425
	sysIOUringEnter    = 426
	sysIOUringRegister = 427

	uringOffSQRing = 0
	uringOffCQRing = 0x8000000
	uringOffSQEs   = 0x10000000

	uringSetupCQSize       = 1 << 3
	uringSetupSubmitAll    = 1 << 7
	uringSetupSingleIssuer = 1 << 12
	uringSetupDeferTaskrun = 1 << 13

	uringFeatSingleMmap = 1 << 0
	uringFeatNoDrop     = 1 << 1
	uringFeatExtArg     = 1 << 8

	uringEnterGetEvents = 1 << 0
	uringEnterExtArg    = 1 << 3

	uringOpPollAdd     = 6
	uringOpAsyncCancel = 14
	uringOpSend        = 26
	uringOpRecv        = 27

	uringSQEBufferSelect = 1 << 5
	uringSQESkipSuccess  = 1 << 6
	uringRecvMultishot   = 1 << 1 // in the SQE's ioprio

	uringCQEFBuffer   = 1 << 0
	uringCQEFMore     = 1 << 1
	uringCQEBufferSft = 16

	uringRegisterPbufRing = 22

	uringMaxEntries = 32768
)

// uringParams is struct io_uring_params.
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  struct {
		head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
		userAddr                                                        uint64
	}
	cqOff struct {
		head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
		userAddr                                                        uint64
	}
}

// uringSQE is struct io_uring_sqe (64 bytes).
type uringSQE struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufGroup    uint16
	personality uint16
	spliceFDIn  int32
	addr3       uint64
	pad         uint64
}

// uringCQE is struct io_uring_cqe (16 bytes).
type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

// uringBuf is struct io_uring_buf, an entry of a provided-buffer ring; the
// ring's tail is the first entry's resv field.
type uringBuf struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// uringBufReg is struct io_uring_buf_reg.
type uringBufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

// uringGetEventsArg is struct io_uring_getevents_arg.
type uringGetEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// uring is one ring: its submission and completion queues mapped into this
// process, and one provided-buffer ring (group 0) of bufCount buffers of
// bufSize bytes.
type uring struct {
	fd       int
	sqMem    []byte
	cqMem    []byte // sqMem with a single mmap
	sqeMem   []byte
	sqHead   *uint32
	sqTail   *uint32
	sqMask   uint32
	sqCount  uint32
	sqes     []uringSQE
	tail     uint32 // the next SQE's index (published at enter)
	toSubmit uint32
	cqHead   *uint32
	cqTail   *uint32
	cqMask   uint32
	cqes     []uringCQE
	extArg   bool

	// The provided buffers: ring entries, their memory, the ring's tail
	// (published to the kernel at each recycle).
	bufRingMem []byte
	bufRing    []uringBuf
	bufMem     []byte
	bufSize    int
	bufMask    uint16
	bufTail    uint16

	// arg and ts are io_uring_enter's wait argument, kept here so that a
	// call allocates nothing.
	arg uringGetEventsArg
	ts  unix.Timespec
}

// uringSetup is io_uring_setup (a variable so that tests can make it fail
// as a kernel without io_uring, or with it disabled, would).
var uringSetup = func(entries uint32, p *uringParams) (int, syscall.Errno) {
	fd, _, errno := syscall.Syscall(sysIOUringSetup, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), 0
}

// newUring sets up a ring of at least entries submissions and cqEntries
// completions, with bufs provided buffers of size bytes (bufs a power of 2).
// It asks for deferred task work (completions posted only when the owner
// enters), which needs the ring to be used from one thread: the caller has
// locked its goroutine to its thread. A kernel without it (before 6.1)
// has no multishot receive either (6.0): errUringOld.
func newUring(entries, cqEntries uint32, bufs, size int) (*uring, error) {
	entries = min(pow2(entries), uringMaxEntries)
	cqEntries = min(max(pow2(cqEntries), 2*entries), 2*uringMaxEntries)
	p := uringParams{flags: uringSetupSingleIssuer | uringSetupDeferTaskrun | uringSetupSubmitAll | uringSetupCQSize,
		cqEntries: cqEntries}
	fd, errno := uringSetup(entries, &p)
	if errno == unix.EINVAL {
		return nil, errUringOld
	}
	if errno != 0 {
		return nil, errno
	}
	u := &uring{fd: fd}
	if err := u.mapRings(&p); err != nil {
		u.close()
		return nil, err
	}
	if p.features&uringFeatNoDrop == 0 {
		u.close()
		return nil, unix.ENOTSUP // completions could be lost
	}
	u.extArg = p.features&uringFeatExtArg != 0
	if err := u.setupBuffers(bufs, size); err != nil {
		u.close()
		return nil, err
	}
	return u, nil
}

// errUringOld is the probe's answer on a kernel whose io_uring lacks what
// the engine uses.
var errUringOld = errors.New("io_uring without deferred task work and multishot receive: Linux 6.1 or later")

// pow2 is the least power of 2 at least n (and at least 1).
func pow2(n uint32) uint32 {
	v := uint32(1)
	for v < n && v < 1<<30 {
		v <<= 1
	}
	return v
}

func (u *uring) mapRings(p *uringParams) error {
	sqSize := int(p.sqOff.array) + int(p.sqEntries)*4
	cqSize := int(p.cqOff.cqes) + int(p.cqEntries)*int(unsafe.Sizeof(uringCQE{}))
	single := p.features&uringFeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if u.sqMem, err = unix.Mmap(u.fd, uringOffSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return err
	}
	u.cqMem = u.sqMem
	if !single {
		if u.cqMem, err = unix.Mmap(u.fd, uringOffCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
			u.cqMem = nil
			return err
		}
	}
	sqeSize := int(p.sqEntries) * int(unsafe.Sizeof(uringSQE{}))
	if u.sqeMem, err = unix.Mmap(u.fd, uringOffSQEs, sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return err
	}
	sq, cq := unsafe.Pointer(&u.sqMem[0]), unsafe.Pointer(&u.cqMem[0])
	u.sqHead = (*uint32)(unsafe.Add(sq, p.sqOff.head))
	u.sqTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	u.sqMask = *(*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	u.sqCount = p.sqEntries
	array := unsafe.Slice((*uint32)(unsafe.Add(sq, p.sqOff.array)), p.sqEntries)
	for i := range array {
		array[i] = uint32(i) // the SQEs are used in ring order
	}
	u.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&u.sqeMem[0])), p.sqEntries)
	u.tail = atomic.LoadUint32(u.sqTail)
	u.cqHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	u.cqTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	u.cqMask = *(*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	u.cqes = unsafe.Slice((*uringCQE)(unsafe.Add(cq, p.cqOff.cqes)), p.cqEntries)
	return nil
}

// setupBuffers maps bufs buffers of size bytes and registers them as
// provided-buffer group 0.
func (u *uring) setupBuffers(bufs, size int) error {
	var err error
	ringBytes := (bufs*int(unsafe.Sizeof(uringBuf{})) + 4095) &^ 4095
	if u.bufRingMem, err = unix.Mmap(-1, 0, ringBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE); err != nil {
		return err
	}
	if u.bufMem, err = unix.Mmap(-1, 0, bufs*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS); err != nil {
		return err
	}
	u.bufRing = unsafe.Slice((*uringBuf)(unsafe.Pointer(&u.bufRingMem[0])), bufs)
	u.bufSize, u.bufMask = size, uint16(bufs-1)
	reg := uringBufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&u.bufRingMem[0]))), ringEntries: uint32(bufs)}
	_, _, errno := syscall.Syscall6(sysIOUringRegister, uintptr(u.fd), uringRegisterPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0)
	if errno != 0 {
		return errno
	}
	for i := range bufs {
		u.provide(uint16(i))
	}
	u.publishBuffers()
	return nil
}

// provide hands buffer bid back to the kernel (seen at publishBuffers).
func (u *uring) provide(bid uint16) {
	b := &u.bufRing[u.bufTail&u.bufMask]
	b.addr = uint64(uintptr(unsafe.Pointer(&u.bufMem[int(bid)*u.bufSize])))
	b.len = uint32(u.bufSize)
	b.bid = bid
	u.bufTail++
}

// publishBuffers makes the buffers provided so far visible to the kernel.
func (u *uring) publishBuffers() {
	// The tail is a 16-bit field after entry 0's bid: one 32-bit store of
	// both (as they lie in memory) is the release store the kernel pairs
	// with its acquire load.
	var v uint32
	halves := (*[2]uint16)(unsafe.Pointer(&v))
	halves[0], halves[1] = u.bufRing[0].bid, u.bufTail
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&u.bufRing[0].bid)), v)
}

// buffer is provided buffer bid's first n bytes.
func (u *uring) buffer(bid uint16, n int) []byte {
	off := int(bid) * u.bufSize
	return u.bufMem[off : off+n : off+n]
}

// sqe returns the next submission entry, zeroed; with the queue full it
// first hands the queued entries to the kernel.
func (u *uring) sqe() *uringSQE {
	if u.tail-atomic.LoadUint32(u.sqHead) >= u.sqCount {
		u.enter(0, false, true)
	}
	e := &u.sqes[u.tail&u.sqMask]
	*e = uringSQE{}
	u.tail++
	u.toSubmit++
	return e
}

// enter hands the queued submissions to the kernel and, if wait, waits for
// at least one completion: at most timeoutMs ms if > 0 and raw (the caller
// keeps its P), else without a limit through Syscall. It returns the errno.
func (u *uring) enter(timeoutMs int, wait, raw bool) syscall.Errno {
	atomic.StoreUint32(u.sqTail, u.tail)
	flags, minComplete := uintptr(uringEnterGetEvents), uintptr(0)
	var arg, argSize uintptr
	if wait {
		minComplete = 1
		if timeoutMs > 0 && u.extArg {
			u.ts = unix.NsecToTimespec(int64(timeoutMs) * 1e6)
			u.arg = uringGetEventsArg{ts: uint64(uintptr(unsafe.Pointer(&u.ts)))}
			flags |= uringEnterExtArg
			arg, argSize = uintptr(unsafe.Pointer(&u.arg)), unsafe.Sizeof(u.arg)
		}
	}
	var errno syscall.Errno
	if raw || !wait {
		_, _, errno = syscall.RawSyscall6(sysIOUringEnter, uintptr(u.fd), uintptr(u.toSubmit), minComplete, flags, arg, argSize)
	} else {
		_, _, errno = syscall.Syscall6(sysIOUringEnter, uintptr(u.fd), uintptr(u.toSubmit), minComplete, flags, arg, argSize)
	}
	// What the kernel has not consumed goes with the next call.
	u.toSubmit = u.tail - atomic.LoadUint32(u.sqHead)
	return errno
}

// completions returns the completion queue's unread entries as a range
// [head, tail); done(tail) releases them.
func (u *uring) completions() (head, tail uint32) {
	return atomic.LoadUint32(u.cqHead), atomic.LoadUint32(u.cqTail)
}

func (u *uring) cqe(i uint32) *uringCQE { return &u.cqes[i&u.cqMask] }

func (u *uring) done(tail uint32) { atomic.StoreUint32(u.cqHead, tail) }

// close unmaps everything and closes the ring (which cancels its requests).
func (u *uring) close() {
	for _, m := range [][]byte{u.sqeMem, u.bufRingMem, u.bufMem} {
		if m != nil {
			_ = unix.Munmap(m)
		}
	}
	if u.cqMem != nil && len(u.cqMem) > 0 && &u.cqMem[0] != &u.sqMem[0] {
		_ = unix.Munmap(u.cqMem)
	}
	if u.sqMem != nil {
		_ = unix.Munmap(u.sqMem)
	}
	u.sqeMem, u.bufRingMem, u.bufMem, u.cqMem, u.sqMem = nil, nil, nil, nil, nil
	if u.fd >= 0 {
		_ = unix.Close(u.fd)
		u.fd = -1
	}
}

// uringProbe tells, once per process, whether this kernel lets gab use the
// io_uring engine: a ring with a provided-buffer ring can be set up (no
// seccomp filter or kernel.io_uring_disabled refuses it, the kernel is new
// enough). Its error says why not.
var uringProbe = sync.OnceValue(probeUring)

func probeUring() error {
	runtime.LockOSThread() // the ring is its creator thread's
	defer runtime.UnlockOSThread()
	u, err := newUring(8, 16, 8, 4096)
	if err != nil {
		return err
	}
	u.close()
	return nil
}
