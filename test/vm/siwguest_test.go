package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

// TestSIWEnvNames: the payloads export what testenv.SIW and testenv.Wire
// read.
func TestSIWEnvNames(t *testing.T) {
	for ours, theirs := range map[string]string{
		envSIWDev: testenv.EnvSIWDev, envSIWAddr: testenv.EnvSIWAddr,
		envSIWPeerDev: testenv.EnvSIWPeerDev, envSIWPeerAddr: testenv.EnvSIWPeerAddr,
		envSIWPeerNetns: testenv.EnvSIWPeerNetns, envWireSIWDev: testenv.EnvWireSIWDev,
	} {
		if ours != theirs {
			t.Errorf("test/vm exports %s, testenv reads %s", ours, theirs)
		}
	}
	wantAll(t, "siw env", siwEnv(),
		"export RDMASTACK_SIW_DEV=siw0\n", "export RDMASTACK_SIW_ADDR=10.78.0.1\n",
		"export RDMASTACK_SIW_PEER_DEV=siw1\n", "export RDMASTACK_SIW_PEER_ADDR=10.78.0.2\n",
		"export RDMASTACK_SIW_PEER_NETNS=/run/netns/siwb\n")
	w := &wireEnd{Side: 0, Peer: kernel{Release: "6.12"}}
	if strings.Contains(w.env(), envWireSIWDev) {
		t.Errorf("a wire guest without siw exports %s:\n%s", envWireSIWDev, w.env())
	}
	w.SIW = true
	wantAll(t, "wire env", w.env(), "export RDMASTACK_WIRE_SIW_DEV=siw0\n")
	r := &vmRun{Kernel: kernel{Release: "6.1"}, Devices: 1, ID: "x", Wire: w}
	if c := r.cmdline(); !strings.Contains(c, " rdmastack.wire=1 rdmastack.siw=1") {
		t.Errorf("siw wire guest's cmdline %q lacks rdmastack.siw=1", c)
	}

	l := testList{wire: map[string][]string{"a": {"TestWireRping"}}, bench: map[string][]string{"b": {"BenchmarkWireX"}}}
	if l.wireSIW() {
		t.Error("wireSIW without a siw wire test")
	}
	l.bench["b"] = append(l.bench["b"], "BenchmarkWireSIWSend")
	if !l.wireSIW() {
		t.Error("no wireSIW with BenchmarkWireSIWSend")
	}
}

// TestInitScriptSIW: a siw guest puts siw1's veth into its namespace and
// creates the devices with iproute2, as the siw notes' recipe does, and
// every guest waits for each of its devices.
func TestInitScriptSIW(t *testing.T) {
	wantAll(t, "init script", initScript,
		"rdmastack.siw=*) siw=${arg#*=} ;;",
		`link add vsiw0 type veth peer name vsiw1\naddr add 10.78.0.1/24 dev vsiw0`,
		`netns add siwb\nlink set vsiw1 netns siwb\n`,
		`link set lo up\naddr add 10.78.0.2/24 dev vsiw1\nlink set vsiw1 up\n`,
		"ip netns exec siwb ip -batch /run/vm/setup-peer.ip",
		"rdma link add siw0 type siw netdev vsiw0 && ip netns exec siwb rdma link add siw1 type siw netdev vsiw1",
		`ibdevs="siw0 siw1"`,
		"cat /sys/class/infiniband/$dev/ports/1/state",
	)
	r := &vmRun{Kernel: kernel{Release: "6.1"}, Devices: 2, Suffix: siwSuffix, ID: "x"}
	if c := r.cmdline(); !strings.Contains(c, " rdmastack.siw=1") {
		t.Errorf("siw guest's cmdline %q lacks rdmastack.siw=1", c)
	}
	r.Suffix = raceSuffix
	if c := r.cmdline(); strings.Contains(c, "siw") {
		t.Errorf("race guest's cmdline %q makes a siw guest", c)
	}
}

// TestSIWSelection: single guests skip siw tests, joined with a user's
// -test.skip; siw guests run exactly the siw tests listed.
func TestSIWSelection(t *testing.T) {
	got := singleArgs([]string{"-test.skip", "Slow", "-test.run", "X"})
	want := []string{"-test.run", "X", "-test.skip", "(^(TestWire|BenchmarkWire)|SIW)|(Slow)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("singleArgs (-want +got):\n%s", diff)
	}
	if err := checkSkip([]string{"-test.skip", "(A/x|B)"}); err != nil {
		t.Errorf("checkSkip of a top-level pattern: %v", err)
	}
	if err := checkSkip([]string{"-test.skip=TestA/sub"}); err == nil {
		t.Error("checkSkip of a subtest pattern: no error")
	}
	for name, want := range map[string]bool{
		"TestIntegrationSIWGuest": true, "BenchmarkSIWSend": true, "TestDevShowSIW": true,
		"TestIntegrationDevices": false, "TestSiwLower": false,
	} {
		if isSIWTest(name) != want {
			t.Errorf("isSIWTest(%q) = %v", name, !want)
		}
	}

	list := testList{
		siw:      map[string][]string{"a": {"TestIntegrationSIWGuest"}},
		siwBench: map[string][]string{"b": {"BenchmarkSIWSend"}},
	}
	if diff := cmp.Diff([]string{"a", "b"}, list.siwBinaries()); diff != "" {
		t.Errorf("siwBinaries (-want +got):\n%s", diff)
	}
	bins := []testBinary{
		{Name: "a", GuestPath: "/tmp/vm/tests/a.test", SourceDir: "/src/a"},
		{Name: "b", GuestPath: "/tmp/vm/tests/b.test", SourceDir: "/src/b"},
		{Name: "c", GuestPath: "/tmp/vm/tests/c.test", SourceDir: "/src/c"},
	}
	p := siwPayload(kernel{Release: "6.1"}, 2, "/tmp/vm/out/x", bins, list, []string{"-test.run", "SIW/sub", "-test.bench", "SIW", "-test.skip", "Slow"})
	wantAll(t, "siw payload", p,
		"export RDMASTACK_SIW_PEER_NETNS=/run/netns/siwb\n",
		"-test.skip Slow -test.run '^(TestIntegrationSIWGuest)$/sub'",
		"-test.skip Slow -test.run '^$' -test.bench '^(BenchmarkSIWSend)$'",
	)
	if strings.Contains(p, "c.test") {
		t.Errorf("siw payload runs binary c, which has no siw test:\n%s", p)
	}
}

// TestSplitWireSIW: siw wire tests go to pairs of their own, with siw0.
func TestSplitWireSIW(t *testing.T) {
	l := testList{
		wire:  map[string][]string{"a": {"TestWireRping", "TestWireSIWRping"}, "b": {"TestWireX"}},
		bench: map[string][]string{"a": {"BenchmarkWireSIWSend"}},
	}
	got := l.splitWireSIW()
	if diff := cmp.Diff(map[string][]string{"a": {"TestWireRping"}, "b": {"TestWireX"}}, got[0].wire); diff != "" {
		t.Errorf("plain wire (-want +got):\n%s", diff)
	}
	if len(got[0].bench) != 0 || got[0].wireSIW() {
		t.Errorf("plain pairs: benches %v, wireSIW %v", got[0].bench, got[0].wireSIW())
	}
	if diff := cmp.Diff(map[string][]string{"a": {"TestWireSIWRping"}}, got[1].wire); diff != "" {
		t.Errorf("siw wire (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"a": {"BenchmarkWireSIWSend"}}, got[1].bench); diff != "" {
		t.Errorf("siw benches (-want +got):\n%s", diff)
	}
	if !got[1].wireSIW() {
		t.Error("siw pairs: no wireSIW")
	}
	w := &wireEnd{Side: 1, Peer: kernel{Release: "6.1"}, SIW: true}
	if id := w.id(kernel{Release: "6.12"}); id != "wire-6.1-6.12-b-siw" {
		t.Errorf("siw pair's id %q", id)
	}
}
