// Package perftest is the one engine behind the six perftest drop-ins
// (cmd/ib_send_bw, ib_write_bw, ib_read_bw, ib_send_lat, ib_write_lat,
// ib_read_lat): perftest 4.5-0.17's ("6.06") flags and refusals, its
// out-of-band exchange over TCP (versions, system data, MTU, the
// colon-separated key messages, the bandwidth reports) so that either end
// may be perftest's, its test loops over package uverbs' data path and
// its result tables.
//
// Timing: perftest counts CPU cycles (get_cycles) and turns them into
// microseconds with the CPU's measured frequency; we read Go's monotonic
// clock (time.Since from one start instant) in nanoseconds and report
// with a fixed 1000 "cycles" per microsecond, so -C (--report-cycles)
// prints nanoseconds. The busy-poll loops poll the CQ as perftest's do;
// event mode (-e) waits in CompChannel.GetEvent, which parks the
// goroutine on the netpoller.
//
// With -R the exchange runs over an rdma_cm RC connection and the test
// QPs are connected by rdma_cm (RC and, for SEND, UC is refused as
// perftest refuses it; UD over rdma_cm is not done here). -D runs for a
// duration, measuring between the margins, as perftest's SIGALRM state
// machine does, polled from the loops.
//
// Waits: as perftest, with -R the exchange waits for the peer's messages
// without a time limit (a -R write or read run lasts as long as its
// client runs it, and its server hears nothing before the closing
// exchange); only the receive loops of SEND keep perftest's check_alive
// (a receiver that gets no message for 60 s gives up), and ours keeps
// the same bound on each latency message (perftest has none there). A
// peer whose process dies ends the run instead of holding it: its kernel
// closes the connection, the CM reports it (and on iWARP flushes the
// QPs), and the run fails within PeerGoneBound. A peer whose machine
// vanishes without a word is waited for, as perftest waits, until the
// run is interrupted.
//
// -b runs both directions at once (run_iter_bi for SEND, both sides
// writing or reading for RDMA), each side printing the sum of both
// sides' results.
//
// Not carried over: dual port, multicast,
// XRC/DC/SRD, raw Ethernet, SRQ, rate limiting, CUDA/ROCm/mmap buffers,
// ODP, post lists, JSON output and performance counters; each is refused
// with a message that says so. The send and receive addresses do not
// cycle through the buffer for small messages as perftest's do (a cache
// effect that Soft-RoCE does not have).
package perftest
