// Package device will join RDMA netlink, uverbs and sysfs into one typed
// model of every RDMA device visible in the caller's network namespace.
//
// This package has no API yet (see the project's README for what each
// package provides today).
package device
