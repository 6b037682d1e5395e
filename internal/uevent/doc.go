// Package uevent reads the kernel's device events: the messages a
// NETLINK_KOBJECT_UEVENT socket bound to the kernel's multicast group
// receives whenever a device is added, removed, renamed or moved
// (lib/kobject_uevent.c). The rdma and device packages use them to know,
// with one non-blocking read, whether the set of RDMA devices may have
// changed since they last asked RDMA netlink.
//
// The kernel delivers uevents only to network namespaces owned by the
// initial user namespace (kobject_uevent.c, uevent_net_init); Delivered
// tells whether the caller's is one, so that a caller elsewhere (a rootless
// container) falls back to asking the kernel every time.
//
// This is the only place that parses uevents; the socket itself is
// internal/nlwatch's, as every netlink multicast socket is.
package uevent
