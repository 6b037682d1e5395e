package main

import (
	"bytes"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// oracle computes show_gids's table from sysfs as NVIDIA's script does,
// in bash (the script is not packaged in Debian): ls order, the two empty
// GIDs skipped, the version matched as the script's grep -o "[Vv].*" of
// the type, the IPv4 address of a GID starting 0000 from its characters
// 30-39. Attributes are read with bash's read, not cat as the script
// does, which would fork thousands of times for rxe's GID tables.
const oracle = `
B=/sys/class/infiniband
echo -e "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV"
echo -e "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"
n=0
for d in ${1:-$(ls $B)}; do
  for p in $(ls $B/$d/ports); do
    for g in $(ls $B/$d/ports/$p/gids); do
      read -r gid <$B/$d/ports/$p/gids/$g
      [ "$gid" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
      [ "$gid" = fe80:0000:0000:0000:0000:0000:0000:0000 ] && continue
      nd=; read -r nd 2>/dev/null <$B/$d/ports/$p/gid_attrs/ndevs/$g
      ty=; read -r ty 2>/dev/null <$B/$d/ports/$p/gid_attrs/types/$g
      ver=; [[ $ty =~ [Vv].* ]] && ver=${BASH_REMATCH[0]}
      if [ "${gid:0:4}" = 0000 ]; then
        ip=$(printf "%d.%d.%d.%d" 0x${gid:30:2} 0x${gid:32:2} 0x${gid:35:2} 0x${gid:37:2})
        echo -e "$d\t$p\t$g\t$gid\t$ip  \t$ver\t$nd"
      else
        echo -e "$d\t$p\t$g\t$gid\t\t\t$ver\t$nd"
      fi
      n=$((n+1))
    done
  done
done
echo n_gids_found=$n
`

// TestIntegrationShowGIDs adds a VLAN with an IPv4 and an IPv6 address
// on veth0 and compares show_gids, for every device and for rxe0 alone,
// with the script's computation: the VLAN's GIDs (RoCE v1 and v2, the
// IPv4 one with its address) must be in both.
func TestIntegrationShowGIDs(t *testing.T) {
	testenv.RequireRDMA(t)
	ip := testenv.Oracle(t, "ip")
	bash := testenv.Oracle(t, "bash")
	testenv.Run(t, ip, "link", "add", "link", "veth0", "name", "veth0.9", "type", "vlan", "id", "9")
	t.Cleanup(func() { exec.Command(ip, "link", "del", "veth0.9").Run() })
	testenv.Run(t, ip, "link", "set", "veth0.9", "up")
	testenv.Run(t, ip, "addr", "add", "10.79.0.1/24", "dev", "veth0.9")
	testenv.Run(t, ip, "addr", "add", "fd79::1/64", "dev", "veth0.9", "nodad")
	for _, a := range []string{"10.79.0.1", "fd79::1"} {
		addr := netip.MustParseAddr(a)
		testenv.WaitFor(t, "rxe0's GID of "+a, func() bool { return rxetest.HasGID("rxe0", addr) })
	}
	for _, args := range [][]string{nil, {"rxe0"}} {
		want := string(testenv.Run(t, bash, append([]string{"-c", oracle, "show_gids"}, args...)...))
		var out bytes.Buffer
		if err := run(&out, args); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, out.String()); d != "" {
			t.Errorf("show_gids %v differs from the script's computation (-script +ours):\n%s", args, d)
		}
		for _, s := range []string{"\t10.79.0.1  \tv2\tveth0.9\n", "fd79:0000:0000:0000:0000:0000:0000:0001\t\t\tv2\tveth0.9\n"} {
			if !strings.Contains(out.String(), s) {
				t.Errorf("show_gids %v has no line with %q:\n%s", args, s, out.String())
			}
		}
	}
}

// TestIntegrationSIWShowGIDs: a Soft-iWARP port's GID table holds its
// MAC-derived GID and no attributes (gid_attrs answers EINVAL on iWARP),
// so the script prints it without a version or netdev; ours does the same.
func TestIntegrationSIWShowGIDs(t *testing.T) {
	env := testenv.SIW(t)
	bash := testenv.Oracle(t, "bash")
	for _, args := range [][]string{nil, {env.Dev}} {
		want := string(testenv.Run(t, bash, append([]string{"-c", oracle, "show_gids"}, args...)...))
		var out bytes.Buffer
		if err := run(&out, args); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, out.String()); d != "" {
			t.Errorf("show_gids %v on siw differs from the script's computation (-script +ours):\n%s", args, d)
		}
		if !strings.Contains(out.String(), env.Dev+"\t1\t0\t") {
			t.Errorf("show_gids %v lists no GID 0 of %s:\n%s", args, env.Dev, out.String())
		}
	}
}
