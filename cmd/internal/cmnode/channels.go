package cmnode

import (
	"errors"

	"github.com/rdmastack/rdmastack/uverbs"
)

// Channels are completion channels shared by the nodes of a program, one
// per device context, made when the first node on the context needs one
// (rdma-core's ucmatose busy-polls with none; one per process, not one
// per connection, keeps the system calls a connection costs at the C
// program's: no channel to create, make non-blocking, register with the
// netpoller and close for each). Node.Wait works the same on a shared
// channel: it re-arms whichever CQ reported and polls its own again.
// The zero value is ready; not safe for concurrent use.
type Channels struct {
	m map[*uverbs.Context]*uverbs.CompChannel
}

// of returns ctx's channel, making it on first use.
func (c *Channels) of(ctx *uverbs.Context) (*uverbs.CompChannel, error) {
	if ch := c.m[ctx]; ch != nil {
		return ch, nil
	}
	ch, err := ctx.CreateCompChannel()
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[*uverbs.Context]*uverbs.CompChannel{}
	}
	c.m[ctx] = ch
	return ch, nil
}

// Close closes the channels; close the nodes that use them first.
func (c *Channels) Close() error {
	var errs []error
	for ctx, ch := range c.m {
		errs = append(errs, ch.Close())
		delete(c.m, ctx)
	}
	return errors.Join(errs...)
}
