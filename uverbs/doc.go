// Package uverbs is libibverbs in Go: a program opens an RDMA device,
// creates its protection domain, queues and memory regions, posts work
// requests and polls their completions, over the kernel's uverbs ABI
// (/dev/infiniband/uverbsN), without rdma-core and without cgo.
//
//	ctx, err := uverbs.OpenName("rxe0")
//	defer ctx.Close() // destroys every object below
//	pd, err := ctx.AllocPD()
//	cq, err := ctx.CreateCQ(uverbs.CQAttr{CQE: 16})
//	qp, err := pd.CreateQP(uverbs.QPInit{Type: ib.QPTypeRC, SendCQ: cq, RecvCQ: cq,
//		Cap: uverbs.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}})
//	err = qp.Init(opts)          // then qp.Connect(opts, peer)
//	err = qp.PostSend(&uverbs.SendWR{...})
//	n, err := cq.Poll(wc)
//
// The package covers contexts on a Device (one package device lists, or
// DeviceByName finds) with their async events (Context.GetEvent);
// device, port, GID and P_Key queries; and protection domains, memory
// regions (with re-registration), completion channels, CQs (with
// resizing), QPs (RC, UC, UD), SRQs (with resizing and the limit event),
// memory windows and address handles, with the data path over them.
// Example_rcDataPath is a whole exchange; package membuf gives the memory.
//
// A Context talks to the kernel the way libibverbs does: through
// RDMA_VERBS_IOCTL where the kernel has it, and through write()
// otherwise. On the ioctl interface CQs, QPs and SRQs are created and
// destroyed with their own methods (UVERBS_METHOD_CQ_CREATE and friends),
// falling back per command to the write() form on kernels without them;
// the other write() commands travel through UVERBS_METHOD_INVOKE_WRITE.
// Every object has an idempotent Close; closing the Context destroys
// every object created through it, and their Go values then report
// os.ErrClosed. Closes may run concurrently with each other and with any
// other use of the objects: a command, post, poll or wait ends with an
// error matching os.ErrClosed (or succeeds, if it came first), and a
// creation overtaken by the Close of its context or of an object it
// names either fails that way or makes the Close wait and fail with
// EBUSY. Errors are *Error values that name the device and the
// operation and keep the errno for errors.Is.
//
// Drivers extend some commands with their own data (udata). This package
// sends and sizes it for rxe (tested on Linux 6.1 and 6.12), siw (from
// rdma/siw-abi.h: GET_CONTEXT, REG_MR and the CQ, QP and SRQ responses;
// unit-tested byte for byte only, as the test VM's Debian kernels do not
// build siw) and mlx5 (from rdma/mlx5-abi.h; unit-tested only, no
// hardware). Other drivers get no driver data.
//
// For mlx5 a context is created with the GET_CONTEXT request rdma-core's
// libmlx5 sends by default, and what the driver answers is decoded into
// an MLX5Context (Context.MLX5). PDs report the hardware PD number
// (PD.PDN) and RoCE address handles the resolved destination MAC
// (AH.MAC). Creating or resizing CQs, QPs and SRQs on mlx5 is refused
// before anything is sent, with an error that names mlx5 and matches
// ErrNotSupported: mlx5 takes their buffers and doorbell records from
// user memory that its user-space provider allocates and lays out, and
// this package has no mlx5 provider.
//
// The data path is the same for every driver: QP.PostSend,
// QP.PostRecv, SRQ.PostRecv, CQ.Poll and CQ.RequestNotify, with the work
// requests (SendWR, RecvWR, SGE) and completions (WC, WCStatus) of
// libibverbs. A CQ, QP or SRQ works its queues through the provider of
// its device's driver, reached from the object as libibverbs reaches a
// context's ops; an application never names the driver. Soft-RoCE (rxe)
// has a provider, in pure Go, with the queues the kernel shares with user
// space mapped from the char device; creating a CQ, QP or SRQ on a driver
// without one fails with an error that names it (ErrNoProvider). Posting
// and polling do not allocate. Buffers named by work requests must be
// registered memory outside the Go heap (package uverbs/membuf).
//
// Waits never stall the Go runtime: CompChannel.GetEvent and
// Context.GetEvent park the goroutine in the netpoller, take a
// context.Context, and are woken by Close; a channel given a poll time
// (CompChannel.SetPollTime) polls, yielding to other goroutines, for up
// to that long before it parks, in waits that follow an event. QP.Init, QP.Connect (and its
// halves ReadyToReceive and ReadyToSend) take a QP through its states
// from a small Peer description; Context.FindGID and FindNetdevGID pick
// the source GID for an address or network device.
package uverbs
