// Package ctxshare keeps sharing a uverbs.Context the module's business.
//
// Package rdma hands one verbs context per device to all of its users
// (rdma.Device.Context). Its Close must not be theirs: rdma opens the
// context, calls uverbs.Share(ctx, ctxshare.Key{}) and keeps the function
// it returns, the only way to close the context; uverbs.Context.Close then
// refuses with uverbs.ErrShared and changes nothing. uverbs.Share is
// exported so that rdma can call it directly, and takes a Key so that only
// packages of this module, which alone can import this one, can.
package ctxshare

// Key is the proof that the caller of uverbs.Share is in this module.
type Key struct{ _ struct{} }
