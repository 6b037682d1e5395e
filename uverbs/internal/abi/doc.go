// Package abi is the raw uverbs ABI: the command, object, method and
// attribute numbers of the kernel's uapi headers (rdma/ib_user_verbs.h,
// rdma/ib_user_ioctl_cmds.h, rdma/ib_user_ioctl_verbs.h,
// rdma/rdma_user_ioctl_cmds.h and the drivers' rdma_user_rxe.h,
// siw-abi.h and mlx5-abi.h), one Go struct per C struct with its padding
// spelled out, and the two choke points through which every command
// reaches the kernel: the RDMA_VERBS_IOCTL attribute builder (Ioctl) and
// the write() framing (Write). Both hand the kernel memory through package
// kabi only: Write's frame and response are a kabi.Msg, and Do pins the
// ioctl's buffers and attributes with kabi.Pins, for the call.
//
// A write() command is built from its typed value (commands.go:
// CmdCreateCq is a Cmd[CreateCq, CreateCqResp]), never as a WriteCmd
// literal, so each command goes with the structs the uapi gives it.
//
// The uverbs ABI is host-endian and laid out the same on 32- and 64-bit
// systems; the structs here are copied to and from the kernel as they sit
// in memory.
package abi
