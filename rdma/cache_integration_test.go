package rdma

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// netlinkSockets returns the inodes of the process's netlink sockets of
// each protocol: /proc/self/fd names every socket's inode, and
// /proc/self/net/netlink the protocol (its Eth column) of every netlink
// socket in the namespace.
func netlinkSockets(t *testing.T) map[int][]uint64 {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	mine := map[uint64]bool{}
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the directory's own fd, closed since
		}
		if s, ok := strings.CutPrefix(target, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
				mine[ino] = true
			}
		}
	}
	f, err := os.Open("/proc/self/net/netlink")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byProto := map[int][]uint64{}
	sc := bufio.NewScanner(f)
	sc.Scan() // the header: sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 10 {
			t.Fatalf("/proc/self/net/netlink: unexpected line %q", sc.Text())
		}
		proto, err1 := strconv.Atoi(fs[1])
		ino, err2 := strconv.ParseUint(fs[9], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("/proc/self/net/netlink: unexpected line %q", sc.Text())
		}
		if mine[ino] {
			byProto[proto] = append(byProto[proto], ino)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return byProto
}

// TestIntegrationOneDeviceCache: GetDevices is built on package device's
// snapshot. After device.List and GetDevices, called again and in either
// order, the process holds one RDMA netlink socket and one uevent socket,
// the same ones throughout, and both list the same devices.
func TestIntegrationOneDeviceCache(t *testing.T) {
	testenv.RequireRDMA(t)
	use := func(listFirst bool) {
		t.Helper()
		var snap *device.Snapshot
		var err error
		if listFirst {
			if snap, err = device.List(); err != nil {
				t.Fatal(err)
			}
		}
		l, err := GetDevices()
		if err != nil {
			t.Fatal(err)
		}
		defer FreeDevices(l)
		if !listFirst {
			if snap, err = device.List(); err != nil {
				t.Fatal(err)
			}
		}
		var want []string
		for _, d := range snap.Verbs() {
			want = append(want, d.Name)
		}
		if got := strings.Split(names(l), ","); !slices.Equal(got, want) {
			t.Fatalf("GetDevices lists %v, device.List %v", got, want)
		}
	}
	use(true)
	first := netlinkSockets(t)
	for _, p := range []struct {
		proto int
		name  string
	}{{unix.NETLINK_RDMA, "RDMA netlink"}, {unix.NETLINK_KOBJECT_UEVENT, "uevent"}} {
		if n := len(first[p.proto]); n != 1 {
			t.Errorf("after device.List and GetDevices the process has %d %s sockets, want 1", n, p.name)
		}
	}
	use(false)
	use(true)
	again := netlinkSockets(t)
	for _, proto := range []int{unix.NETLINK_RDMA, unix.NETLINK_KOBJECT_UEVENT} {
		if !slices.Equal(first[proto], again[proto]) {
			t.Errorf("netlink protocol %d sockets %v, then %v: want the same ones", proto, first[proto], again[proto])
		}
	}
}
