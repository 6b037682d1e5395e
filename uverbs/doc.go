// Package uverbs will speak the kernel's uverbs ABI over
// /dev/infiniband/uverbsN (ioctl and write interfaces): contexts, queries,
// PD, MR, CQ, QP, SRQ, AH and async events, without rdma-core.
//
// This package has no API yet (see the project's README for what each
// package provides today).
package uverbs
