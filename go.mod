module github.com/rdmastack/rdmastack

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/mdlayher/netlink v1.11.2
	golang.org/x/net v0.53.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/mdlayher/socket v0.6.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
)
