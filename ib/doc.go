// Package ib holds the small value types of the InfiniBand architecture
// that every other package of rdmastack speaks: GUIDs, node types, port
// states, physical port states and link layers, and the one
// ErrNotSupported sentinel.
//
// The types live in one package of their own so that nldev, uverbs,
// device and rdma can share them without importing each other. Each type
// prints the way iproute2's rdma tool and rdma-core's tools print it.
package ib
