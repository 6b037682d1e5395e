// Package rtnl is rdmastack's one place for the rtnetlink ABI
// (NETLINK_ROUTE: linux/rtnetlink.h, linux/if_link.h): the constants and
// structs it sends and reads, the requests built from them, and the
// parsing of the kernel's link messages. It speaks only what the device
// package needs of network devices: a link's type and its SR-IOV VFs'
// InfiniBand GUIDs. Parsing is pure functions over byte slices, fuzzed.
package rtnl
