// Package rxe is the user-space data path of Soft-RoCE (the kernel's rxe
// driver) in pure Go, the provider layer under package uverbs: uverbs
// creates the objects (CQ, QP, SRQ) through the kernel, and this package
// maps the queues the driver shares with user space and works them
// directly, as rdma-core's librxe does.
//
// NewCQ, NewQP and NewSRQ take ownership of a uverbs object of an rxe
// device (any other driver gives an error naming it) and map its queues
// at the offsets of the driver's create response (struct mminfo). Work
// requests are written into the send and receive queues and published
// with a release store of the producer index; completions are read from
// the CQ after an acquire load of its producer index (the kernel's
// smp_store_release/smp_load_acquire on struct rxe_queue_buf). Posting a
// send rings the doorbell, a POST_SEND write() command carrying the QP
// handle and no work requests; receives need none. Event mode arms a CQ
// with REQ_NOTIFY_CQ and reads events from a uverbs.CompChannel; when a
// completion has landed since the CQ was armed, the event is known to be
// queued and WaitEvent reads it without waiting first.
//
// PostSend, PostRecv and Poll do not allocate. Buffers named by work
// requests must be registered memory outside the Go heap (package
// uverbs/membuf).
package rxe
