package uverbs

import (
	"fmt"
	"math/bits"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// mlx5's create commands.
//
// mlx5 takes a CQ's, QP's or SRQ's memory from user space: the create
// command carries the address of a queue buffer and of a doorbell record
// (struct mlx5_ib_create_cq and friends), and the kernel pins both and
// hands them to the hardware, which writes there for the object's
// lifetime. The prepare hooks below allocate them outside the Go heap
// (anonymous mappings, which nothing but their undo frees) and size them
// by libmlx5's rules (rdma-core providers/mlx5/verbs.c), which the kernel
// checks the command against.
// What works the queues (posting, polling, UAR doorbells) waits for
// hardware: newCQ, newQP and newSRQ return errMLX5DataPath, and the
// generic code then destroys the kernel object; the memory is freed
// after that, by the returned object's release, since the kernel holds
// it until the object is gone.

// errMLX5DataPath is the cause of a CQ, QP or SRQ that mlx5 created but
// this package cannot work.
var errMLX5DataPath = fmt.Errorf("the mlx5 data path waits for hardware to be tested on: %w", ErrNoProvider)

// mlx5CQESize is the CQE size libmlx5 uses unless told otherwise
// (get_cqe_size: 64, or 128 through mlx5dv or MLX5_CQE_SIZE).
const mlx5CQESize = 64

// mlx5MaxCQE is the most CQEs libmlx5 allocates for a CQ.
const mlx5MaxCQE = 1 << 24

// mlx5State is what an opened mlx5 provider keeps: the context's
// report, and the user indexes its QPs hold.
type mlx5State struct {
	m *MLX5Context

	mu       sync.Mutex
	nextUIDX uint32
	freeUIDX []uint32
}

// open keeps what GET_CONTEXT reported, which the prepare hooks size and
// check the queues by: the provider becomes one with that state (the
// provider is a value chosen before GET_CONTEXT, so open replaces it in
// the context).
func (p mlx5Provider) open(c *Context) error {
	c.prov = mlx5Provider{controlOnly: p.controlOnly, st: &mlx5State{m: c.mlx5}}
	return nil
}

// report is the context's GET_CONTEXT report.
func (p mlx5Provider) report() (*MLX5Context, error) {
	if p.st == nil || p.st.m == nil {
		return nil, fmt.Errorf("mlx5 provider without a context: %w", unix.EINVAL)
	}
	return p.st.m, nil
}

// dynamicUAR refuses a queue that needs a UAR (a CQ's arm doorbell, a
// QP's blue-flame register) on a context without static ones: the kernel
// reports tot_bfregs 0 when it granted MLX5_LIB_CAP_DYN_UAR, and then
// refuses (EINVAL) a CQ or QP that names no UAR page of its own, which
// user space allocates (MLX5_IB_METHOD_UAR_OBJ_ALLOC) and maps: part of
// the data path.
func dynamicUAR(m *MLX5Context, what string) error {
	if m.TotalBFRegs != 0 {
		return nil
	}
	return fmt.Errorf("mlx5 context with dynamic UARs (tot_bfregs 0): a %s needs a UAR page allocated by the data path: %w", what, ErrNotSupported)
}

// uidx takes a user index for a QP: with CQE version 1 the CQEs name the
// QP by it, so it is unique in the context (libmlx5's mlx5_store_uidx);
// with version 0 it is the kernel's default. put gives it back.
func (s *mlx5State) uidx() (u uint32, put func(), err error) {
	if s.m.CQEVersion == 0 {
		return abi.MLX5_IB_DEFAULT_UIDX, func() {}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.freeUIDX); n > 0 {
		u = s.freeUIDX[n-1]
		s.freeUIDX = s.freeUIDX[:n-1]
	} else {
		if s.nextUIDX > abi.MLX5_USER_ASSIGNED_UIDX_MASK {
			return 0, nil, fmt.Errorf("mlx5 user indexes exhausted: %w", unix.ENOMEM)
		}
		u = s.nextUIDX
		s.nextUIDX++
	}
	return u, func() {
		s.mu.Lock()
		s.freeUIDX = append(s.freeUIDX, u)
		s.mu.Unlock()
	}, nil
}

// mlx5Mem is a queue's memory given to the mlx5 driver: the queue buffer
// and the doorbell record, each an anonymous mapping of whole pages (the
// kernel pins the doorbell record's page, and shares a pinned page among
// the records of a context by its address: a page of its own keeps a
// freed record's address from aliasing another's).
type mlx5Mem struct {
	buf, db []byte
	once    sync.Once
	undo    []func()
}

// newMLX5Mem maps bufLen bytes (rounded up to whole pages) and a page
// for the doorbell record, both zero.
func newMLX5Mem(bufLen int) (*mlx5Mem, error) {
	if bufLen <= 0 {
		return nil, fmt.Errorf("mlx5 queue buffer of %d bytes: %w", bufLen, unix.EINVAL)
	}
	ps := os.Getpagesize()
	buf, err := unix.Mmap(-1, 0, (bufLen+ps-1)/ps*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("map mlx5 queue buffer: %w", err)
	}
	db, err := unix.Mmap(-1, 0, ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		unix.Munmap(buf)
		return nil, fmt.Errorf("map mlx5 doorbell record: %w", err)
	}
	return &mlx5Mem{buf: buf, db: db}, nil
}

// free unmaps the memory and runs what else was taken with it; more
// than one call is harmless.
func (m *mlx5Mem) free() {
	m.once.Do(func() {
		unix.Munmap(m.buf)
		unix.Munmap(m.db)
		m.buf, m.db = nil, nil
		for _, f := range m.undo {
			f()
		}
	})
}

// mlx5Addr is the address of mapped memory, for a command.
func mlx5Addr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }

// mlx5Husk is a created mlx5 queue without a data path: it holds the
// queue's memory until the generic code has destroyed the kernel object,
// and its release frees it (free is the prepare hook's undo).
type mlx5Husk struct{ free func() }

func (h mlx5Husk) requestNotify(bool) error { return errMLX5DataPath }
func (h mlx5Husk) produced() uint32         { return 0 }
func (h mlx5Husk) resized() error           { return errMLX5DataPath }
func (h mlx5Husk) maxInline() int           { return 0 }
func (h mlx5Husk) maxSendSGE() int          { return 0 }
func (h mlx5Husk) release() error {
	if h.free != nil {
		h.free()
	}
	return nil
}

// newCQ: the CQ exists in the kernel, with mlx5's memory, but nothing
// here works it yet; the husk frees the memory once it is destroyed.
func (mlx5Provider) newCQ(_ *CQ, d driverIO) (cqOps, error) { return mlx5Husk{d.undo}, errMLX5DataPath }
func (mlx5Provider) newQP(_ *QP, d driverIO) (qpOps, error) { return mlx5Husk{d.undo}, errMLX5DataPath }
func (mlx5Provider) newSRQ(_ *SRQ, d driverIO) (srqOps, error) {
	return mlx5Husk{d.undo}, errMLX5DataPath
}

// mlx5CQEntries is the number of CQEs libmlx5 allocates for a CQ of at
// least cqe entries (create_cq: roundup_pow_of_two(cqe + 1), at most
// 2^24; one more than asked, as the kernel's own count is, so that a
// full queue is told from an empty one). The kernel computes the same
// from the core command's cqe.
func mlx5CQEntries(cqe int) (int, error) {
	if cqe < 1 || cqe >= mlx5MaxCQE {
		return 0, fmt.Errorf("mlx5 CQ of %d entries: %w", cqe, unix.EINVAL)
	}
	return roundUpPow2(cqe + 1), nil
}

// prepareCQ allocates the CQ buffer (mlx5CQEntries CQEs of 64 bytes,
// each marked invalid: not yet written by the hardware) and its 8-byte
// doorbell record (set_ci, arm), and sends struct mlx5_ib_create_cq:
// their addresses, cqe_size 64, no compression, no flags and UAR page 0
// (the kernel then uses the context's first static UAR page).
func (p mlx5Provider) prepareCQ(attr *CQAttr) (driverIO, error) {
	m, err := p.report()
	if err != nil {
		return driverIO{}, err
	}
	if err := dynamicUAR(m, "CQ"); err != nil {
		return driverIO{}, err
	}
	n, err := mlx5CQEntries(attr.CQE)
	if err != nil {
		return driverIO{}, err
	}
	mem, err := newMLX5Mem(n * mlx5CQESize)
	if err != nil {
		return driverIO{}, err
	}
	mlx5InitCQEs(mem.buf, n)
	cmd := abi.Mlx5IbCreateCq{BufAddr: mlx5Addr(mem.buf), DbAddr: mlx5Addr(mem.db), CqeSize: mlx5CQESize}
	return mlx5IO(&cmd, kabi.Sizeof[abi.Mlx5IbCreateCqResp](), mem), nil
}

// mlx5InitCQEs gives the n 64-byte CQEs in buf to software: the high
// nibble of each one's last byte (op_own) says MLX5_CQE_INVALID until the
// hardware writes it, as libmlx5's mlx5_alloc_cq_buf leaves them.
func mlx5InitCQEs(buf []byte, n int) {
	for i := range n {
		buf[i*mlx5CQESize+mlx5CQESize-1] = abi.MLX5_CQE_INVALID << 4
	}
}

// mlx5IO is the driverIO of a create command whose driver data is cmd
// and memory mem.
func mlx5IO[T any](cmd *T, out int, mem *mlx5Mem) driverIO {
	return driverIO{in: kabi.Bytes(cmd), out: make([]byte, out), undo: mem.free}
}

// mlx5QPSizes is a QP's queues as libmlx5 lays them out in one buffer:
// the receive queue at 0, the send queue after it.
type mlx5QPSizes struct {
	sqWQEBBs   uint32 // send queue size in 64-byte basic blocks, a power of two (0: none)
	rqWQEs     uint32 // receive queue entries (0: none, as with an SRQ)
	rqWQEShift uint32 // log2 of a receive entry's bytes
	sqOffset   int    // bytes of the receive queue
	bufLen     int    // both queues: what the kernel pins, (rqWQEs << rqWQEShift) + sqWQEBBs*64
}

// Sizes of libmlx5's send WQE segments (providers/mlx5/mlx5dv.h): the
// control segment, the remote address and atomic segments, the UMR
// segments of a memory-window bind or local invalidate (umr control, mkey
// context, and at least 64 bytes of translation), the UD address vector,
// the inline header and a data (scatter/gather) segment.
const (
	mlx5CtrlSeg     = 16
	mlx5RaddrSeg    = 16
	mlx5AtomicSeg   = 16
	mlx5UMRCtrlSeg  = 48
	mlx5MkeyCtxSeg  = 64
	mlx5UMRTransSeg = 64
	mlx5DatagramSeg = 48
	mlx5InlineSeg   = 4
	mlx5DataSeg     = 16
	mlx5SRQNextSeg  = 16
)

// mlx5SQOverhead is the bytes before the first data segment of libmlx5's
// largest send WQE for a QP type (_sq_overhead with the default send
// operations): for RC and UC every operation, of which a memory-window
// bind (control, UMR control, mkey context, translation: 192 bytes) is
// the largest; for UD sends only, a control segment and the address
// vector.
func mlx5SQOverhead(t ib.QPType) int {
	if t == ib.QPTypeUD {
		return mlx5CtrlSeg + mlx5DatagramSeg
	}
	rdma := mlx5CtrlSeg + mlx5RaddrSeg
	atomic := mlx5CtrlSeg + mlx5RaddrSeg + mlx5AtomicSeg
	mw := mlx5CtrlSeg + mlx5UMRCtrlSeg + mlx5MkeyCtxSeg + mlx5UMRTransSeg
	return max(mlx5CtrlSeg, rdma, atomic, mw)
}

// mlx5QPSize sizes a QP's queues as libmlx5's mlx5_calc_wq_size does,
// checked against the limits the context reported (a zero limit is not
// checked).
//
// Send queue (mlx5_calc_send_wqe, mlx5_calc_sq_size): a WQE is the
// overhead plus a data segment per SGE, or the overhead plus the inline
// header and the inline data rounded up to 16 bytes, whichever is more,
// rounded up to the 64-byte basic block; the queue is max_send_wr such
// WQEs rounded up to a power of two bytes.
//
// Receive queue (mlx5_calc_rcv_wqe, mlx5_calc_rq_size): none with an
// SRQ; else an entry is a data segment per SGE (at least one) rounded up
// to a power of two, and the queue max_recv_wr entries rounded up to a
// power of two, at least one basic block.
func mlx5QPSize(init *QPInit, m *MLX5Context) (mlx5QPSizes, error) {
	var s mlx5QPSizes
	c := init.Cap
	inval := func(format string, a ...any) (mlx5QPSizes, error) {
		return mlx5QPSizes{}, fmt.Errorf("mlx5 QP: "+format+": %w", append(a, unix.EINVAL)...)
	}
	sqDesc, rqDesc := int(m.MaxSQDescSize), int(m.MaxRQDescSize)
	sqBytes := 0
	if c.MaxSendWR > 0 {
		over := mlx5SQOverhead(init.Type)
		size := over
		inl := 0
		if c.MaxInlineData > 0 {
			inl = over + alignUp(mlx5InlineSeg+int(c.MaxInlineData), 16)
		}
		if sqDesc > 0 && int(c.MaxSendSGE) > (sqDesc-over)/mlx5DataSeg {
			return inval("%d send SGEs, at most %d", c.MaxSendSGE, (sqDesc-over)/mlx5DataSeg)
		}
		size += int(c.MaxSendSGE) * mlx5DataSeg
		tot := max(size, inl)
		if sqDesc > 0 && tot > sqDesc {
			return inval("send WQE of %d bytes, at most %d", tot, sqDesc)
		}
		wqe := alignUp(tot, abi.MLX5_SEND_WQE_BB)
		if uint64(c.MaxSendWR)*uint64(wqe) > 1<<30 || sqDesc > 0 && int(c.MaxSendWR) > 0x7fffffff/sqDesc {
			return inval("%d send WRs", c.MaxSendWR)
		}
		sqBytes = roundUpPow2(int(c.MaxSendWR) * wqe)
		s.sqWQEBBs = uint32(sqBytes / abi.MLX5_SEND_WQE_BB)
		if m.MaxSendWQEBB > 0 && s.sqWQEBBs > m.MaxSendWQEBB {
			return inval("%d send basic blocks, at most %d", s.sqWQEBBs, m.MaxSendWQEBB)
		}
	}
	rqBytes := 0
	if c.MaxRecvWR > 0 {
		if m.MaxRecvWR > 0 && c.MaxRecvWR > m.MaxRecvWR {
			return inval("%d receive WRs, at most %d", c.MaxRecvWR, m.MaxRecvWR)
		}
		if init.SRQ == nil {
			wqe := mlx5DataSeg * max(int(c.MaxRecvSGE), 1)
			if rqDesc > 0 && wqe > rqDesc || c.MaxRecvWR > 1<<24 {
				return inval("%d receive SGEs or %d WRs", c.MaxRecvSGE, c.MaxRecvWR)
			}
			wqe = roundUpPow2(wqe)
			if rqDesc > 0 && wqe > rqDesc {
				return inval("receive WQE of %d bytes, at most %d", wqe, rqDesc)
			}
			rqBytes = max(roundUpPow2(int(c.MaxRecvWR))*wqe, abi.MLX5_SEND_WQE_BB)
			s.rqWQEs = uint32(rqBytes / wqe)
			s.rqWQEShift = uint32(bits.TrailingZeros(uint(wqe)))
		}
	}
	s.sqOffset = rqBytes
	s.bufLen = rqBytes + sqBytes
	return s, nil
}

// prepareQP allocates the QP buffer (mlx5QPSize) and its 8-byte doorbell
// record (receive, send) and sends struct mlx5_ib_create_qp: their
// addresses, the queue sizes, a user index, no flags (no scatter to
// CQE, no signatures: what libmlx5 turns on by default belongs to a data
// path), no blue-flame register index (the kernel picks one and reports
// it in the response) and no ECE.
func (p mlx5Provider) prepareQP(init *QPInit) (driverIO, error) {
	m, err := p.report()
	if err != nil {
		return driverIO{}, err
	}
	if err := dynamicUAR(m, "QP"); err != nil {
		return driverIO{}, err
	}
	s, err := mlx5QPSize(init, m)
	if err != nil {
		return driverIO{}, err
	}
	if s.bufLen == 0 {
		return driverIO{}, fmt.Errorf("mlx5 QP without send or receive queue: %w", unix.EINVAL)
	}
	u, put, err := p.st.uidx()
	if err != nil {
		return driverIO{}, err
	}
	mem, err := newMLX5Mem(s.bufLen)
	if err != nil {
		put()
		return driverIO{}, err
	}
	mem.undo = append(mem.undo, put)
	cmd := abi.Mlx5IbCreateQp{BufAddr: mlx5Addr(mem.buf), DbAddr: mlx5Addr(mem.db), SqWqeCount: s.sqWQEBBs,
		RqWqeCount: s.rqWQEs, RqWqeShift: s.rqWQEShift, Uidx: u}
	return mlx5IO(&cmd, kabi.Sizeof[abi.Mlx5IbCreateQpResp](), mem), nil
}

// mlx5SRQSize sizes an SRQ as the kernel does from the core command's
// max_wr and max_sge (create_srq_user), which is libmlx5's
// mlx5_alloc_srq_buf without its wait queue: an entry is a next segment
// and a data segment per SGE, at least 32 bytes, rounded up to a power
// of two; the queue max_wr + 1 entries rounded up to a power of two.
func mlx5SRQSize(attr *SRQAttr, m *MLX5Context) (entries, entrySize int, err error) {
	if m.MaxSRQRecvWR > 0 && attr.MaxWR > m.MaxSRQRecvWR || attr.MaxWR >= 1<<24 {
		return 0, 0, fmt.Errorf("mlx5 SRQ of %d WRs, at most %d: %w", attr.MaxWR, m.MaxSRQRecvWR, unix.EINVAL)
	}
	if m.MaxRQDescSize > 0 && int(attr.MaxSGE) > int(m.MaxRQDescSize)/mlx5DataSeg || attr.MaxSGE > 1<<16 {
		return 0, 0, fmt.Errorf("mlx5 SRQ of %d SGEs: %w", attr.MaxSGE, unix.EINVAL)
	}
	entrySize = roundUpPow2(max(32, mlx5SRQNextSeg+int(attr.MaxSGE)*mlx5DataSeg))
	return roundUpPow2(int(attr.MaxWR) + 1), entrySize, nil
}

// prepareSRQ allocates the SRQ buffer (mlx5SRQSize) and its doorbell
// record (one 32-bit word) and sends struct mlx5_ib_create_srq: their
// addresses, no flags and user index 0, as libmlx5's mlx5_create_srq.
func (p mlx5Provider) prepareSRQ(attr *SRQAttr) (driverIO, error) {
	m, err := p.report()
	if err != nil {
		return driverIO{}, err
	}
	n, size, err := mlx5SRQSize(attr, m)
	if err != nil {
		return driverIO{}, err
	}
	mem, err := newMLX5Mem(n * size)
	if err != nil {
		return driverIO{}, err
	}
	cmd := abi.Mlx5IbCreateSrq{BufAddr: mlx5Addr(mem.buf), DbAddr: mlx5Addr(mem.db)}
	return mlx5IO(&cmd, kabi.Sizeof[abi.Mlx5IbCreateSrqResp](), mem), nil
}

// roundUpPow2 is the least power of two at least n (n >= 1).
func roundUpPow2(n int) int { return 1 << bits.Len(uint(n-1)) }

// alignUp rounds n up to a multiple of a, a power of two.
func alignUp(n, a int) int { return (n + a - 1) &^ (a - 1) }
