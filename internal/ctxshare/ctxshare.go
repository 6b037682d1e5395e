// Package ctxshare is the one way to close a shared uverbs.Context.
//
// Package rdma hands one verbs context per device to all of its users
// (rdma.Device.Context). Its Close must not be theirs: uverbs.Context.Close
// refuses a shared context with uverbs.ErrShared and changes nothing, and
// only the function Share returns closes it. Package uverbs sets Share when
// it is initialised (this package cannot name *uverbs.Context, which
// imports it); rdma's device cache is its only caller.
package ctxshare

// Share marks ctx, a *uverbs.Context, shared and returns the function that
// closes it. It panics if ctx is anything else.
var Share func(ctx any) (close func() error)
