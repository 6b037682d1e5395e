package main

import (
	"fmt"
	"strings"
)

// Markers the guest prints on its console, alone on a line.
const (
	markerReady      = "VM-READY"          // devices are up; payload output follows
	markerExit       = "VM-EXIT-STATUS="   // + the payload's exit status
	markerFailed     = "VM-SETUP-FAILED: " // + why the guest could not set up
	markerTestStart  = "VM-TEST-START "    // + binary name
	markerTestStatus = "VM-TEST-EXIT "     // + binary name, space, exit status
)

// Paths inside the guest's chroot (the host's root file system).
const (
	guestWork = "/tmp/vm" // the writable 9p share of the host's work directory
	guestPath = guestWork + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// initScript is the initramfs's /init, run by busybox sh as PID 1. It
// loads the modules listed in /etc/modules.list, mounts the host's root
// read-only at /mnt and the work directory at /mnt/tmp/vm, creates the veth
// pairs and rxe devices with the host's iproute2, waits for every port to be
// ACTIVE and runs the payload script in a chroot. The kernel command line
// carries rdmastack.devices=N and rdmastack.run=ID (the payload is
// /tmp/vm/run/ID/payload.sh). A guest of a pair (rdmastack.wire=H, see
// wire.go) has instead one device on eth0 (the wire), rxe0, with the address
// 10.88.0.H/24, or siw0 instead of rxe0 with rdmastack.siw=1. A siw guest
// (rdmastack.siw=1 without rdmastack.wire, see siwguest.go)
// has siw0 and siw1 instead of rxe devices, their veths in two network
// namespaces. It always ends by powering off; QEMU runs with -no-reboot, so
// a panic ends the VM too.
const initScript = `#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /mnt /tmp /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
export HOME=/

fail() {
	echo "` + markerFailed + `$*"
	sync
	poweroff -f
	echo o >/proc/sysrq-trigger
	exit 1
}

mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "mount /dev"
exec </dev/console >/dev/console 2>&1
echo "vm: init: $(uname -r)"

devices=
run=
src=
wire=
siw=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	rdmastack.devices=*) devices=${arg#*=} ;;
	rdmastack.run=*) run=${arg#*=} ;;
	rdmastack.src=*) src=${arg#*=} ;;
	rdmastack.wire=*) wire=${arg#*=} ;;
	rdmastack.siw=*) siw=${arg#*=} ;;
	esac
done
[ -n "$devices" ] && [ -n "$run" ] || fail "no rdmastack.devices= or rdmastack.run= on the kernel command line"

while read -r mod args; do
	[ -n "$mod" ] || continue
	insmod "$mod" $args || fail "insmod $mod $args"
done </etc/modules.list

msize=512000
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=$msize hostroot /mnt || fail "mount 9p hostroot"
mount -t proc proc /mnt/proc || fail "mount /mnt/proc"
mount -t sysfs sysfs /mnt/sys || fail "mount /mnt/sys"
mkdir -p /dev/pts /dev/shm
mount -o bind /dev /mnt/dev || fail "bind /mnt/dev"
mount -t devpts -o newinstance,ptmxmode=0666 devpts /mnt/dev/pts || fail "mount /mnt/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs /mnt/dev/shm || fail "mount /mnt/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs /mnt/tmp || fail "mount /mnt/tmp"
mount -t tmpfs -o mode=0755 tmpfs /mnt/run || fail "mount /mnt/run"
mkdir -p /mnt` + guestWork + ` /mnt/run/vm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=$msize work /mnt` + guestWork + ` || fail "mount 9p work"
# A module checked out under a directory the guest covers with tmpfs
# comes in over its own share, at the same path.
case "$src" in
/tmp/*|/run/*)
	mkdir -p "/mnt$src" && mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=$msize src "/mnt$src" || fail "mount 9p src at $src"
	;;
esac
payload=` + guestWork + `/run/$run/payload.sh
[ -f "/mnt$payload" ] || fail "no payload $payload in the work directory"

# Device k is rxek on vethk; veth pair i is veth(2i), veth(2i+1) with the
# addresses 10.77.i.1/24 and 10.77.i.2/24, fd77:i::1/64 and fd77:i::2/64,
# and the link-local addresses the kernel gives them. Without duplicate
# address detection every IPv6 address is usable (and has its RoCE GID)
# as soon as its link is up, not a second or two later; and the IPv6
# addresses stay when a test takes a link down, as the IPv4 ones do.
# A wire guest has rxe0 (or siw0) on eth0 instead; a siw guest siw0 on
# ` + siwVeth0 + ` (` + siwNet + `.1/24) and siw1 on its peer ` + siwVeth1 + ` (` + siwNet + `.2/24),
# moved into the network namespace ` + siwNetns + `: two siw devices of one
# namespace would talk through the device that owns the destination address.
syspath=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Through the host's sh, so that busybox cannot run its own applets instead
# of the host's commands.
inroot() {
	env -i PATH=$syspath HOME=/tmp chroot /mnt /bin/sh -c "$1"
}
if [ -n "$wire" ]; then
	[ "$devices" = 1 ] || fail "a wire guest has one device (rdmastack.devices=1), not $devices"
	printf 'link set lo up\naddr add ` + wireNet + `.%s/24 dev eth0\nlink set eth0 up\n' "$wire" >/mnt/run/vm/setup.ip
	inroot "ip -batch /run/vm/setup.ip" || fail "ip -batch: could not set up eth0, the wire"
	# siw0 alone in the pairs of the wire tests named SIW: rdma_cm binds
	# an address on eth0 to the first device it finds there, so with rxe0
	# there too no connection would use siw0.
	if [ -n "$siw" ]; then
		echo "link add ` + siwDev + ` type siw netdev eth0" >/mnt/run/vm/setup.rdma
		ibdevs=` + siwDev + `
	else
		echo "link add rxe0 type rxe netdev eth0" >/mnt/run/vm/setup.rdma
		ibdevs=rxe0
	fi
elif [ -n "$siw" ]; then
	printf 'link set lo up\nlink add ` + siwVeth0 + ` type veth peer name ` + siwVeth1 + `\naddr add ` + siwNet + `.1/24 dev ` + siwVeth0 + `\nlink set ` + siwVeth0 + ` up\nnetns add ` + siwNetns + `\nlink set ` + siwVeth1 + ` netns ` + siwNetns + `\n' >/mnt/run/vm/setup.ip
	printf 'link set lo up\naddr add ` + siwNet + `.2/24 dev ` + siwVeth1 + `\nlink set ` + siwVeth1 + ` up\n' >/mnt/run/vm/setup-peer.ip
	inroot "ip -batch /run/vm/setup.ip && ip netns exec ` + siwNetns + ` ip -batch /run/vm/setup-peer.ip" || fail "ip: could not set up the siw veths and the namespace ` + siwNetns + `"
	inroot "rdma link add ` + siwDev + ` type siw netdev ` + siwVeth0 + ` && ip netns exec ` + siwNetns + ` rdma link add ` + siwPeerDev + ` type siw netdev ` + siwVeth1 + `" || fail "rdma link add: could not create the siw devices"
	: >/mnt/run/vm/setup.rdma
	ibdevs="` + siwDev + ` ` + siwPeerDev + `"
else
pairs=$(( (devices + 1) / 2 ))
for c in default all; do
	f=/mnt/proc/sys/net/ipv6/conf/$c
	[ -d $f ] || continue
	echo 0 >$f/accept_dad
	echo 1 >$f/keep_addr_on_down
done
{
	echo "link set lo up"
	i=0
	while [ $i -lt $pairs ]; do
		a=$((2 * i))
		b=$((2 * i + 1))
		echo "link add veth$a type veth peer name veth$b"
		echo "addr add 10.77.$i.1/24 dev veth$a"
		echo "addr add 10.77.$i.2/24 dev veth$b"
		echo "addr add fd77:$i::1/64 dev veth$a nodad"
		echo "addr add fd77:$i::2/64 dev veth$b nodad"
		echo "link set veth$a up"
		echo "link set veth$b up"
		i=$((i + 1))
	done
} >/mnt/run/vm/setup.ip
inroot "ip -batch /run/vm/setup.ip" || fail "ip -batch: could not create the veth pairs"
ibdevs=
k=0
while [ $k -lt $devices ]; do
	ibdevs="$ibdevs rxe$k"
	k=$((k + 1))
done
for dev in $ibdevs; do
	echo "link add $dev type rxe netdev veth${dev#rxe}"
done >/mnt/run/vm/setup.rdma
fi
# The project's own rdma (nldev NEWLINK) creates the devices when it was
# built into the work directory; iproute2's otherwise.
rdmatool=rdma
[ -x /mnt/tmp/vm/bin/rdma ] && rdmatool=/tmp/vm/bin/rdma
[ -s /mnt/run/vm/setup.rdma ] && { inroot "$rdmatool -b /run/vm/setup.rdma" || fail "$rdmatool link add: could not create the devices"; }

tries=0
for dev in $ibdevs; do
	while :; do
		state=$(cat /sys/class/infiniband/$dev/ports/1/state 2>/dev/null)
		case "$state" in
		*ACTIVE*) break ;;
		esac
		tries=$((tries + 1))
		[ $tries -le 300 ] || fail "$dev port 1 not ACTIVE after 30s (state: ${state:-no such device})"
		sleep 0.1
	done
done

echo ` + markerReady + `
env -i PATH=` + guestPath + ` HOME=/tmp chroot /mnt /bin/sh $payload </dev/null
echo "` + markerExit + `$?"
sync
poweroff -f
echo o >/proc/sysrq-trigger
`

// payloadEnv is the environment every payload exports.
func payloadEnv(k kernel, devices int, outDir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "export PATH=%s\n", shellQuote(guestPath))
	b.WriteString("export HOME=/tmp\n")
	b.WriteString("export RDMASTACK_VM=1\n")
	fmt.Fprintf(&b, "export RDMASTACK_VM_KERNEL=%s\n", shellQuote(k.Release))
	fmt.Fprintf(&b, "export RDMASTACK_VM_DEVICES=%d\n", devices)
	fmt.Fprintf(&b, "export RDMASTACK_OUT=%s\n", shellQuote(outDir))
	return b.String()
}

// runPayload is the payload of run mode: the command, run by sh -c from
// the module's root directory.
func runPayload(k kernel, devices int, outDir, moduleRoot string, command []string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# test/vm run payload\n")
	b.WriteString(payloadEnv(k, devices, outDir))
	fmt.Fprintf(&b, "cd %s || exit 125\n", shellQuote(moduleRoot))
	fmt.Fprintf(&b, "exec sh -c %s\n", shellQuote(shellJoin(command)))
	return b.String()
}

// testBinary is a test binary built on the host and run in the guest.
type testBinary struct {
	Name       string // short name, such as "nldev"
	ImportPath string
	HostPath   string // the binary, as the host sees it
	SourceDir  string // the package's directory: the test's working directory
	GuestPath  string // the binary, as the guest sees it
}

// testPayload is the payload of test mode: each test binary in turn from its
// package's source directory, framed by markers; the exit status is 1 if any
// binary failed. Each binary runs from a copy in the guest's tmpfs: run
// from the 9p share, a process pays demand paging over 9p whenever it first
// touches a page of its code, which made the first garbage collections of
// a test binary take 20-120 ms and timing tests meaningless.
func testPayload(k kernel, devices int, outDir string, bins []testBinary, extraArgs []string) string {
	return testScript(payloadEnv(k, devices, outDir), bins, extraArgs)
}

// testScript is testPayload with env, the payload's exports.
func testScript(env string, bins []testBinary, extraArgs []string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# test/vm test payload\n")
	b.WriteString(env)
	b.WriteString("status=0\n")
	b.WriteString(testSteps(bins, extraArgs))
	b.WriteString("exit $status\n")
	return b.String()
}

// testSteps runs each binary in turn, as testPayload describes; status
// becomes 1 if one fails.
func testSteps(bins []testBinary, extraArgs []string) string {
	var b strings.Builder
	args := append([]string{"-test.v", "-test.count=1"}, extraArgs...)
	for _, t := range bins {
		fmt.Fprintf(&b, "echo %s\n", shellQuote(markerTestStart+t.Name))
		fmt.Fprintf(&b, "bin=$(mktemp /tmp/vmtest.XXXXXX) && cp %s \"$bin\" && chmod 755 \"$bin\" || bin=%s\n",
			shellQuote(t.GuestPath), shellQuote(t.GuestPath))
		fmt.Fprintf(&b, "(cd %s && exec \"$bin\" %s)\n", shellQuote(t.SourceDir), shellJoin(args))
		fmt.Fprintf(&b, "rc=$?\n[ \"$bin\" = %s ] || rm -f \"$bin\"\n", shellQuote(t.GuestPath))
		fmt.Fprintf(&b, "echo \"%s%s $rc\"\n", markerTestStatus, t.Name)
		b.WriteString("[ $rc -eq 0 ] || status=1\n")
	}
	return b.String()
}
