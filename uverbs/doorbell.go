package uverbs

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The data path's doorbells (POST_SEND with no work requests,
// REQ_NOTIFY_CQ) are write(2)s on the uverbs char device. Through the
// scheduler's system-call path, each one that follows an idle wait wakes
// the runtime's sysmon thread, which then ticks every 20 µs for a
// millisecond or more: in the Soft-RoCE VM that made an event-mode
// pingpong 2–3 times rdma-core's round trip on Linux 6.1 and about 1.7
// times on 6.12 (issue #38), where a raw call was level with it. But a
// doorbell can run long: ib_uverbs_post_send allocates with GFP_KERNEL,
// and on Linux 6.1 rxe (and siw everywhere) transmits inside the call,
// so a 256 KiB RDMA WRITE is packetized and sent before the write
// returns. A raw call there hides a running thread from the scheduler:
// with a goroutine streaming such WRITEs, runtime.GC() and the
// stop-the-world wait elsewhere in the process took about twice as long
// (BenchmarkDoorbellRuntime, README).
//
// So each doorbell takes the raw call only while it is measured short on
// the running kernel: a doorbellGate per Context and kind of doorbell
// times every call and lets the raw call in after a run of calls through
// the scheduler that all returned within doorbellShort, and sends the
// next one back through the scheduler as soon as one takes longer. A
// call that returns within doorbellShort is one that sysmon, whose
// shortest tick it is, would not have acted on: the raw call takes
// nothing from the scheduler that its path would have given, and a
// collection waits at most that long for it. A kind that has fallen back
// must show a longer run before it is let in again (doubling, up to
// doorbellMaxRun), so that a mix of short and long calls settles on the
// scheduler's path.
//
// Every wait for an event goes through the netpoller (package
// internal/waitfd), so a waiting goroutine is parked and holds no P, the
// garbage collector never waits on it, and Close and context
// cancellation wake it.

// doorbellShort is how long a doorbell may take and still be let take
// the raw call: sysmon's shortest tick.
const doorbellShort = 20 * time.Microsecond

// doorbellRun is how many calls in a row through the scheduler must be
// short before the raw call is let in; doorbellMaxRun caps it as it
// doubles with each fall-back.
const (
	doorbellRun    = 8
	doorbellMaxRun = 1 << 14
)

// doorbellKind tells apart the doorbells whose cost differs: POST_SEND
// may run the transmit, REQ_NOTIFY_CQ never does.
type doorbellKind uint8

const (
	doorbellPostSend doorbellKind = iota
	doorbellNotify
	numDoorbellKinds
)

func (k doorbellKind) String() string {
	if k == doorbellNotify {
		return "req notify cq"
	}
	return "post send"
}

// doorbellPolicy is how the gates decide: doorbellGated (what the
// package does), or always one path (for the benchmarks' comparison).
type doorbellPolicy int32

const (
	doorbellGated doorbellPolicy = iota
	doorbellAlwaysSyscall
	doorbellAlwaysRaw
)

// doorbellMode is the process's policy; tests set it.
var doorbellMode atomic.Int32

// doorbellGate decides, for one kind of doorbell of one Context, which
// call the next one takes. It is safe for concurrent posters: a race
// only shifts a decision by a call.
type doorbellGate struct {
	raw  atomic.Bool
	run  atomic.Uint32 // short calls in a row through the scheduler
	need atomic.Uint32 // the run that lets the raw call in; 0: doorbellRun
	// Counters for tests and benchmarks.
	rawCalls, fallbacks atomic.Uint64
}

// useRaw reports whether the next call takes the raw call.
func (g *doorbellGate) useRaw() bool {
	switch doorbellPolicy(doorbellMode.Load()) {
	case doorbellAlwaysRaw:
		return true
	case doorbellAlwaysSyscall:
		return false
	}
	return g.raw.Load()
}

// took records how long a call took and which call it was.
func (g *doorbellGate) took(d time.Duration, raw bool) {
	short := d <= doorbellShort
	switch {
	case raw && short:
		g.rawCalls.Add(1)
	case raw:
		g.rawCalls.Add(1)
		g.fallbacks.Add(1)
		g.raw.Store(false)
		g.run.Store(0)
		g.need.Store(min(max(doorbellRun, g.need.Load())*2, doorbellMaxRun))
	case short:
		need := g.need.Load()
		if need == 0 {
			need = doorbellRun
		}
		if g.run.Add(1) >= need {
			g.raw.Store(true)
		}
	default:
		g.run.Store(0)
	}
}

// doorbellWrite is the one system call of the doorbells: write(2) of b
// on fd, raw or through the scheduler's path.
func doorbellWrite(fd int, b []byte, raw bool) (int, error) {
	call := unix.Syscall
	if raw {
		call = unix.RawSyscall
	}
	n, _, e := call(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
