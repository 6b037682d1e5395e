// Package rdma will provide librdmacm's rdma_get_devices/rdma_free_devices
// contract in Go: GetDevices returns a caller-owned slice of shared,
// cached device contexts, FreeDevices releases it (twice is harmless),
// and a list that is never freed is reported as a leak.
//
// This package has no API yet: it arrives with the uverbs control path
// (see the project's README for what each package provides today).
package rdma
