// Package devsnap hands package device's snapshot to the module's other
// packages without making it a promise of device's API. Package rdma
// builds librdmacm's device list on it, so that the process keeps one
// RDMA netlink socket, one uevent socket and one snapshot of its devices
// for both packages.
package devsnap

import "github.com/rdmastack/rdmastack/uverbs"

// Verbs returns the generation of package device's snapshot of the
// calling thread's network namespace and, when the generation is not
// since, the snapshot's devices in index order (Uverbs "" for one without
// a uverbs char device). A snapshot is brought up to date before it is
// answered from, on the same events as device.List; a new generation
// means the devices may have changed since the previous one. Generations
// start at 1, so since 0 always gets the devices.
//
// Package device sets Verbs when it is initialized: a package that calls
// it imports device.
var Verbs func(since uint64) (gen uint64, devs []uverbs.Device, err error)
