// Package uverbs speaks the kernel's uverbs ABI over
// /dev/infiniband/uverbsN without rdma-core: device enumeration (RDMA
// netlink, with sysfs as the fallback), contexts with their async event
// fd, device, port, GID and P_Key queries, and the control path of
// protection domains, memory regions, completion channels, CQs, QPs
// (RC, UC, UD), SRQs and address handles.
//
// A Context talks to the kernel the way libibverbs does: through
// RDMA_VERBS_IOCTL where the kernel has it (write() commands then travel
// through UVERBS_METHOD_INVOKE_WRITE), and through write() otherwise.
// Every object has an idempotent Close; closing the Context destroys
// every object created through it, and their Go values then report
// os.ErrClosed. Errors are *Error values that name the device and the
// operation and keep the errno for errors.Is.
//
// Drivers extend some commands with their own data (udata). This package
// sends and sizes it for rxe (tested on Linux 6.1 and 6.12) and siw (from
// rdma/siw-abi.h; not exercised by the test VM). Other drivers get no
// driver data, which mlx5, for one, refuses at GET_CONTEXT.
//
// The data path (posting work requests, polling CQs through the
// driver's mmapped queues) is not part of this package.
package uverbs
