package udnode

import (
	"context"
	"fmt"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode"
	"github.com/rdmastack/rdmastack/rdma"
)

// Run is what main does around the test in udaddy.c and mckey.c: the
// event channel, the nodes alloc makes on it (status 1 when it fails),
// run, then "test complete", every node destroyed, the channel closed
// and "return status <n>". It returns run's status.
func (t *Test) Run(alloc func(*rdma.EventChannel) ([]*Node, bool), run func() int) int {
	ch, msg, _ := cmnode.CreateChannel()
	if ch == nil {
		fmt.Fprintln(t.Stderr, msg)
		return 1
	}
	nodes, ok := alloc(ch)
	if !ok {
		ch.Close()
		return 1
	}
	ret := run()
	t.printf("test complete\n")
	for _, n := range nodes {
		n.Destroy()
	}
	ch.Close()
	t.printf("return status %d\n", ret)
	return ret
}

// ConnectEvents is connect_events in udaddy.c and mckey.c: ch's events,
// each handled then acked, until *left (which the handlers count down)
// is 0 or a handler fails; a failed read ends it with -errno.
func ConnectEvents(ch *rdma.EventChannel, left *int, handle func(*rdma.Event) int) int {
	ret := 0
	for *left > 0 && ret == 0 {
		ev, err := ch.GetEvent(context.Background())
		if err != nil {
			return int(-cmnode.Errno(err))
		}
		ret = handle(ev)
		ev.Ack()
	}
	return ret
}
