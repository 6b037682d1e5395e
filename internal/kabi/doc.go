// Package kabi is how rdmastack hands memory to the kernel: the one
// Bytes/Decode/Sizeof for the uapi structs, and the one framing of a
// write(2) command whose pointer field the kernel follows, shared by the
// uverbs write() interface (uverbs/internal/abi) and the rdma_cm char
// device (rdma/internal/ucma).
//
// # The rule
//
// Memory the kernel reads or writes through an address it was given is
// memory kabi allocated, pinned for the duration of the call, by
// construction:
//
//   - A Msg allocates its frame (the bytes write(2) sends) and the buffer
//     behind the frame's pointer fields in one allocation of its own.
//     Callers copy their request into it and their response out of it;
//     they never produce an address. Send pins the allocation, writes the
//     addresses into the frame, makes the write(2) through the scheduler's
//     system-call path (unix.Write), retries EINTR, reports a short write,
//     and unpins before it returns.
//   - Every address goes through Pins.Pin, which hands it to
//     runtime.Pinner.Pin. Pin's argument escapes, so the compiler puts the
//     memory on the heap whatever its declaration says; Go's heap does not
//     move objects, and a pinned object is not freed. The address is taken
//     from the pinned pointer, after pinning, and no Go stack is involved:
//     a stack that grows or shrinks between building the frame and the
//     system call (the morestack of the call into unix.Write itself) cannot
//     leave a stale address behind.
//
// Memory outside Go's heap (a unix.Mmap region) is outside this rule's
// concern: Pin ignores it and it never moves.
//
// # Tests
//
// SetHook replaces the write(2) of Send for tests: package kabitest plays
// the kernel's side through it, following each address the way the kernel
// would and failing any that does not lie in memory kabi pinned for the
// call.
package kabi
