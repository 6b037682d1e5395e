package nldev

import (
	"fmt"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// PortID names one port: the index of its device and its number (from 1).
type PortID struct {
	Dev  uint32
	Port uint32
}

// PortCountersOf returns the hardware counters of each of ports, as
// PortCounters does for one, asking for all of them in one batch of
// requests (several to a datagram): an exporter that reads every port of
// every device pays a fraction of the round trips. counters[i] and errs[i]
// answer ports[i]; errs[i] is what PortCounters would have returned
// (os.ErrNotExist for a port or device gone, ErrNoCounters for a driver
// without counters).
func (c *Client) PortCountersOf(ports []PortID) (counters [][]Counter, errs []error) {
	reqs := make([]request, len(ports))
	counters, errs = make([][]Counter, len(ports)), make([]error, len(ports))
	for i, p := range ports {
		op := fmt.Sprintf("get counters of port %d of device %d", p.Port, p.Dev)
		if p.Port == 0 {
			errs[i] = invalid(op, "ports are numbered from 1")
		}
		reqs[i] = request{op: op, cmd: nlabi.RDMA_NLDEV_CMD_STAT_GET, attrs: devPortAttrs(p.Dev, p.Port)}
	}
	// Port 0 is refused without being sent; idx maps the batch back.
	send := make([]request, 0, len(reqs))
	idx := make([]int, 0, len(reqs))
	for i, r := range reqs {
		if errs[i] == nil {
			send, idx = append(send, r), append(idx, i)
		}
	}
	for k, res := range c.batch(send) {
		i := idx[k]
		if res.err != nil {
			errs[i] = c.explainStatEINVAL(reqs[i].op, ports[i].Dev, ports[i].Port, res.err, true)
			continue
		}
		pc, err := decodePortCounters(res.data)
		if err != nil {
			errs[i] = wrap(reqs[i].op, err)
			continue
		}
		counters[i] = pc.Counters
	}
	return counters, errs
}
