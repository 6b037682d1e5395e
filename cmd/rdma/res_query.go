package main

import "github.com/rdmastack/rdmastack/nldev"

// resQuery is how a kind's objects are asked for: dump lists a device's
// objects (a per-link kind's of one port, when port is not 0); get looks
// one up by id, and is nil for kinds without lookups.
type resQuery[T any] struct {
	dump func(c *nldev.Client, dev, port uint32, opts []nldev.ResourceOption) ([]T, error)
	get  func(c *nldev.Client, dev, port, id uint32) (T, error)
}

// devQuery is the query of a per-device kind, from nldev's methods.
func devQuery[T any](dump func(*nldev.Client, uint32, ...nldev.ResourceOption) ([]T, error),
	get func(*nldev.Client, uint32, uint32) (T, error)) resQuery[T] {
	q := resQuery[T]{dump: func(c *nldev.Client, dev, _ uint32, opts []nldev.ResourceOption) ([]T, error) {
		return dump(c, dev, opts...)
	}}
	if get != nil {
		q.get = func(c *nldev.Client, dev, _, id uint32) (T, error) { return get(c, dev, id) }
	}
	return q
}

// linkQuery is the query of a per-link kind: a device's dump, a port's
// dump and the lookup.
func linkQuery[T any](dump func(*nldev.Client, uint32, ...nldev.ResourceOption) ([]T, error),
	portDump func(*nldev.Client, uint32, uint32, ...nldev.ResourceOption) ([]T, error),
	get func(*nldev.Client, uint32, uint32, uint32) (T, error)) resQuery[T] {
	return resQuery[T]{
		dump: func(c *nldev.Client, dev, port uint32, opts []nldev.ResourceOption) ([]T, error) {
			if port == 0 {
				return dump(c, dev, opts...)
			}
			return portDump(c, dev, port, opts...)
		},
		get: get,
	}
}

// fetch runs the query for one device (and port): the lookup by id when a
// doit filter gives one (with the dump as the fallback iproute2 uses for
// kernels without lookups), else the dump.
func (q resQuery[T]) fetch(rs *resSession, dev, port uint32) ([]T, error) {
	if id, ok := rs.fs.doitIndex(); ok && q.get != nil {
		v, err := q.get(rs.c, dev, port, id)
		if err == nil {
			return []T{v}, nil
		}
		if rs.o.raw {
			return nil, err
		}
	}
	return q.dump(rs.c, dev, port, rs.opts())
}
