package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// oracle computes ibdev2netdev's lines from sysfs as NVIDIA's script
// does for Ethernet ports, in bash (the script is not packaged in
// Debian): the port's netdev is its GID table's first entry's, the link
// state the netdev's carrier; -v adds the PCI function whose infiniband
// directory lists the device alone, MT and the PCI device id, the VPD's
// part number and description, fw_ver and the port state, each NA (or
// nothing) where sysfs has none.
const oracle = `
B=/sys/class/infiniband
for d in $(ls $B); do
  for p in $(ls $B/$d/ports); do
    eth=$(cat $B/$d/ports/$p/gid_attrs/ndevs/0 2>/dev/null)
    [ -n "$eth" ] || continue
    if [ -f /sys/class/net/$eth/carrier ]; then
      c=$(cat /sys/class/net/$eth/carrier 2>/dev/null)
      if [ "$c" = 1 ]; then ls=Up; else ls=Down; fi
    else
      ls=NA
    fi
    if [ "$1" != -v ]; then echo "$d port $p ==> $eth ($ls)"; continue; fi
    x=
    for pd in $(ls /sys/bus/pci/devices); do
      [ -d /sys/bus/pci/devices/$pd/infiniband ] && [ "$(ls /sys/bus/pci/devices/$pd/infiniband)" = "$d" ] && x=$pd
    done
    st=NA; [ -f $B/$d/ports/$p/state ] && st=$(printf "%-6s" $(awk '{print $2}' $B/$d/ports/$p/state))
    id=NA; [ -f $B/$d/device/device ] && id=$(printf "MT%d" $(cat $B/$d/device/device))
    fw=NA; [ -f $B/$d/fw_ver ] && fw=$(cat $B/$d/fw_ver)
    desc=; part=NA
    echo "$x $d ($id - $part) $desc fw $fw port $p ($st) ==> $eth ($ls)"
  done
done
`

// TestIntegrationIbdev2netdev compares both forms with the script's
// computation on the VM's rxe devices, with a VLAN with an IPv6 address
// on veth0 (an upper, which the script does not list) and an rxe device
// on a dummy that is down (its carrier unreadable: Down, where the GID
// table still names it).
func TestIntegrationIbdev2netdev(t *testing.T) {
	testenv.RequireRDMA(t)
	ip := testenv.Oracle(t, "ip")
	bash := testenv.Oracle(t, "bash")
	testenv.Run(t, ip, "link", "add", "link", "veth0", "name", "veth0.10", "type", "vlan", "id", "10")
	t.Cleanup(func() { exec.Command(ip, "link", "del", "veth0.10").Run() })
	testenv.Run(t, ip, "link", "set", "veth0.10", "up")
	testenv.Run(t, ip, "addr", "add", "fd80::1/64", "dev", "veth0.10", "nodad")
	testenv.Dummy(t, "rsi2ndum0")
	rdma := testenv.Oracle(t, "rdma")
	testenv.Run(t, rdma, "link", "add", "rsi2nrxe0", "type", "rxe", "netdev", "rsi2ndum0")
	t.Cleanup(func() { exec.Command(rdma, "link", "del", "rsi2nrxe0").Run() })
	testenv.Run(t, ip, "link", "set", "rsi2ndum0", "down")
	for _, args := range [][]string{nil, {"-v"}} {
		want := string(testenv.Run(t, bash, append([]string{"-c", oracle, "ibdev2netdev"}, args...)...))
		var out bytes.Buffer
		if err := run(&out, args); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, out.String()); d != "" {
			t.Errorf("ibdev2netdev %v differs from the script's computation (-script +ours):\n%s", args, d)
		}
		if !strings.Contains(out.String(), "rxe0 ") || !strings.Contains(out.String(), "==> veth0 (Up)\n") || strings.Contains(out.String(), "veth0.10") {
			t.Errorf("ibdev2netdev %v: want rxe0 on veth0 (Up) and no VLAN:\n%s", args, out.String())
		}
	}
}

// TestIntegrationSIWIbdev2netdev: a Soft-iWARP port has no GID table of
// netdevs, so the script's way finds nothing for it; ours names the netdev
// RDMA netlink gives, as rdma link does: siw0's veth here, and no line for
// siw1, whose netdev lives in the peer namespace.
func TestIntegrationSIWIbdev2netdev(t *testing.T) {
	env := testenv.SIW(t)
	fw := "NA"
	if b, err := os.ReadFile("/sys/class/infiniband/" + env.Dev + "/fw_ver"); err == nil {
		fw = strings.TrimSpace(string(b))
	}
	netdev := siwNetdev(t, env.Dev)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, env.Dev + " port 1 ==> " + netdev + " (Up)\n"},
		{[]string{"-v"}, " " + env.Dev + " (NA - NA)  fw " + fw + " port 1 (ACTIVE) ==> " + netdev + " (Up)\n"},
	} {
		var out bytes.Buffer
		if err := run(&out, tc.args); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, out.String()); d != "" {
			t.Errorf("ibdev2netdev %v on siw (-want +got):\n%s", tc.args, d)
		}
	}
}

// siwNetdev is the netdev rdma link shows for dev's port 1.
func siwNetdev(t *testing.T, dev string) string {
	t.Helper()
	out := string(testenv.Run(t, testenv.Oracle(t, "rdma"), "link", "show", dev+"/1"))
	_, after, ok := strings.Cut(out, " netdev ")
	if !ok {
		t.Fatalf("rdma link show %s/1 names no netdev: %s", dev, out)
	}
	return strings.Fields(after)[0]
}
