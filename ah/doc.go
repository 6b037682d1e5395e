// Package ah will bring the kernel's address-handle attribute semantics
// (rdma_copy_ah_attr, rdma_replace_ah_attr, rdma_move_ah_attr,
// rdma_destroy_ah_attr, rdma_move_grh_sgid_attr) to Go, over a
// reference-counted mirror of the kernel's GID table.
//
// This package has no API yet (see the project's README for what each
// package provides today).
package ah
