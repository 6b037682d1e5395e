module github.com/rdmastack/rdmastack/bench/k8s

go 1.26.0

require (
	github.com/Mellanox/rdmamap v1.1.0
	github.com/google/go-cmp v0.7.0
	github.com/rdmastack/rdmastack v0.0.0
	github.com/vishvananda/netlink v1.3.1
)

require (
	github.com/mdlayher/netlink v1.11.2 // indirect
	github.com/mdlayher/socket v0.6.0 // indirect
	github.com/vishvananda/netns v0.0.5 // indirect
	golang.org/x/net v0.53.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
