// Package ucma is the rdma_cm char device's write() ABI (version 4): the
// command structs, constants and framing of include/uapi/rdma/rdma_user_cm.h
// (/usr/include/rdma/rdma_user_cm.h), as the kernel's
// drivers/infiniband/core/ucma.c reads them. Each Go struct mirrors one C
// struct on x86-64 and other 64-bit little-endian ABIs, with every gap a
// named reserved field; abi_test.go asserts the sizes and offsets.
//
// Commands travel through package kabi (Write, WriteIn and EventBuf add
// the header, whose lengths count bytes): the frame and the memory behind
// its pointer field are kabi's, pinned for the call.
package ucma
