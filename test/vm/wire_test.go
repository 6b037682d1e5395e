package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
)

var (
	k61  = kernel{Release: "6.1.0-57-amd64"}
	k612 = kernel{Release: "6.12.117+deb12-amd64"}
)

// TestPairEnvNames: the payload exports what testenv.Wire reads.
func TestPairEnvNames(t *testing.T) {
	for ours, theirs := range map[string]string{
		envWireSide: testenv.EnvWireSide, envWireSelf: testenv.EnvWireSelf,
		envWirePeer: testenv.EnvWirePeer, envWirePeerKernel: testenv.EnvWirePeerKernel,
	} {
		if ours != theirs {
			t.Errorf("test/vm exports %s, testenv reads %s", ours, theirs)
		}
	}
}

func TestPairOrders(t *testing.T) {
	names := func(ps [][2]kernel) []string {
		var n []string
		for _, p := range ps {
			n = append(n, p[0].Release+"~"+p[1].Release)
		}
		return n
	}
	for _, tc := range []struct {
		ks, self []kernel
		want     []string
	}{
		{[]kernel{k61, k612}, []kernel{k61}, []string{k61.Release + "~" + k612.Release, k612.Release + "~" + k61.Release, k61.Release + "~" + k61.Release}},
		{[]kernel{k612, k61}, []kernel{k612}, []string{k612.Release + "~" + k61.Release, k61.Release + "~" + k612.Release, k612.Release + "~" + k612.Release}},
		{[]kernel{k61, k612}, nil, []string{k61.Release + "~" + k612.Release, k612.Release + "~" + k61.Release}},
		{[]kernel{k61}, []kernel{k61}, []string{k61.Release + "~" + k61.Release}},
		{nil, nil, nil},
	} {
		if diff := cmp.Diff(tc.want, names(wirePairs(tc.ks, tc.self))); diff != "" {
			t.Errorf("wirePairs(%v) (-want +got):\n%s", tc.ks, diff)
		}
	}
}

// TestPairQEMU: a wire guest has a NIC (-wire-nic) on a UDP socket sending to
// its peer's port, its own MAC, rdmastack.wire=H on the kernel command
// line and a name and ID that say the pair and the side.
func TestPairQEMU(t *testing.T) {
	var out strings.Builder
	r := testRun(t, &out)
	r.Devices = 1
	r.Wire = &wireEnd{Side: 1, Peer: k612, Port: 40002, PeerPort: 40001, NIC: "e1000"}
	args := strings.Join(r.qemuArgs(), " ")
	wantAll(t, "qemu args", args,
		"-netdev socket,id=wire,udp=127.0.0.1:40001,localaddr=127.0.0.1:40002",
		"-device e1000,netdev=wire,mac=52:54:00:88:00:02",
		"rdmastack.wire=2",
		"rdmastack.devices=1",
	)
	if strings.Contains(args, "-nic none") {
		t.Errorf("a wire guest has -nic none: %s", args)
	}
	if got, want := r.name(), "wire 6.12.117+deb12-amd64 <-> 6.1.0-57-amd64, side b"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	j := vmJob{kernel: r.Kernel, devices: 1, wire: r.Wire}
	if got, want := j.id(), "wire-6.12.117+deb12-amd64-6.1.0-57-amd64-b"; got != want {
		t.Errorf("id %q, want %q", got, want)
	}
	r.Wire = nil
	if args := strings.Join(r.qemuArgs(), " "); !strings.Contains(args, "-nic none") || strings.Contains(args, "netdev") {
		t.Errorf("a single guest has a NIC: %s", args)
	}
	// -append ends the command line.
	r.Append = " slub_debug=FZPU "
	if c := r.cmdline(); !strings.HasSuffix(c, " rdmastack.run="+r.ID+" slub_debug=FZPU") {
		t.Errorf("cmdline with -append: %q", c)
	}
}

func TestFreeUDPPorts(t *testing.T) {
	ports, err := freeUDPPorts(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 2 || ports[0] == ports[1] || ports[0] == 0 {
		t.Errorf("ports %v", ports)
	}
}

func TestRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		run  string
		ok   bool
	}{
		{nil, "", false},
		{[]string{"-test.run", "A"}, "A", true},
		{[]string{"-test.run=A", "-test.v", "--test.run", "B/c"}, "B/c", true},
		{[]string{"-test.runx", "A"}, "", false},
		{[]string{"-test.run"}, "", false},
	} {
		run, ok := runFlag(tc.args)
		if run != tc.run || ok != tc.ok {
			t.Errorf("runFlag(%q) = %q, %v; want %q, %v", tc.args, run, ok, tc.run, tc.ok)
		}
	}
	if b, ok := testFlag([]string{"-test.run", "XXX", "-test.bench", "Rstream"}, "test.bench"); b != "Rstream" || !ok {
		t.Errorf("testFlag test.bench = %q, %v", b, ok)
	}
	if diff := cmp.Diff([]string{"-test.v", "-test.runx", "y"}, withoutFlags([]string{"-test.run=A", "-test.v", "-test.run", "B", "-test.runx", "y", "-test.bench", "Z"}, "test.run", "test.bench")); diff != "" {
		t.Errorf("withoutFlags (-want +got):\n%s", diff)
	}
	for in, want := range map[string][2]string{
		"A":            {"A", ""},
		"A/b/c":        {"A", "b/c"},
		"(A/x|B)/c":    {"(A/x|B)", "c"},
		"[/]A/c":       {"[/]A", "c"},
		`A\/x/c`:       {`A\/x`, "c"},
		"^TestWire$/x": {"^TestWire$", "x"},
	} {
		if top, rest := splitRun(in); top != want[0] || rest != want[1] {
			t.Errorf("splitRun(%q) = %q, %q; want %q, %q", in, top, rest, want[0], want[1])
		}
	}
	if diff := cmp.Diff([]string{"-test.run", "X", "-test.skip", "^(TestWire|BenchmarkWire)|SIW"}, singleArgs([]string{"-test.run", "X"})); diff != "" {
		t.Errorf("singleArgs (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		args, tests, benches, want []string
	}{
		{ // tests only: -test.run names them, keeping the subtest part
			[]string{"-test.run", "Wire/both.sides", "-test.timeout=5m"}, []string{"TestWireA", "TestWire.B"}, nil,
			[]string{"-test.timeout=5m", "-test.run", `^(TestWireA|TestWire\.B)$/both.sides`},
		},
		{ // tests only: a -test.bench for the other binaries goes
			[]string{"-test.run", "TestWireA", "-test.bench", "BenchmarkWire", "-test.benchtime", "3x"}, []string{"TestWireA"}, nil,
			[]string{"-test.run", `^(TestWireA)$`},
		},
		{ // benchmarks only: no test runs, the count is given
			[]string{"-test.run", "^$", "-test.bench", "BenchmarkWire(A|B)/size=64", "-test.benchtime=3x"}, nil, []string{"BenchmarkWireA", "BenchmarkWireB"},
			[]string{"-test.run", "^$", "-test.bench", `^(BenchmarkWireA|BenchmarkWireB)$/size=64`, "-test.benchtime", "3x"},
		},
		{ // a duration becomes 1x: the halves could not agree on b.N
			[]string{"-test.bench", ".", "-test.benchtime", "2s", "-test.v"}, []string{"TestWireA"}, []string{"BenchmarkWireA"},
			[]string{"-test.v", "-test.run", `^(TestWireA)$`, "-test.bench", `^(BenchmarkWireA)$`, "-test.benchtime", "1x"},
		},
		{ // no -test.benchtime: 1x
			[]string{"-test.bench", "WireA"}, nil, []string{"BenchmarkWireA"},
			[]string{"-test.run", "^$", "-test.bench", `^(BenchmarkWireA)$`, "-test.benchtime", "1x"},
		},
	} {
		if diff := cmp.Diff(tc.want, pairArgs(tc.args, tc.tests, tc.benches)); diff != "" {
			t.Errorf("pairArgs(%q, %q, %q) (-want +got):\n%s", tc.args, tc.tests, tc.benches, diff)
		}
	}
	for in, want := range map[string]string{"": "1x", "5x": "5x", "0x": "1x", "x": "1x", "1s": "1x", "100ms": "1x"} {
		args := []string{"-test.benchtime", in}
		if in == "" {
			args = nil
		}
		if got := countBenchtime(args); got != want {
			t.Errorf("countBenchtime(%q) = %q, want %q", args, got, want)
		}
	}
}

// fakeBinary writes a shell script that stands in for a test binary: it
// answers -test.list with names (filtered by grep -E, as a regexp) and
// otherwise runs script.
func fakeBinary(t *testing.T, dir, name string, names []string, script string) testBinary {
	t.Helper()
	p := filepath.Join(dir, name+".test")
	body := "#!/bin/sh\nif [ \"$1\" = -test.list ]; then printf '%s\\n' " + shellJoin(names) + " | grep -E -e \"$2\"; exit 0; fi\n" + script
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src", name)
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	return testBinary{Name: name, SourceDir: src, GuestPath: p, HostPath: p}
}

// TestPairPayload lists the wire tests of fake binaries, runs side b's
// payload over them with the host's sh and checks its tally as the pair
// run does.
func TestPairPayload(t *testing.T) {
	dir := t.TempDir()
	bins := []testBinary{
		fakeBinary(t, dir, "rsock", []string{"TestIntegrationX", "TestWireBulk", "TestWireClose", "BenchmarkRsocket", "BenchmarkWireGoodput"},
			`echo "args: $*"; echo "env: $RDMASTACK_VM_DEVICES $RDMASTACK_WIRE_SIDE $RDMASTACK_WIRE_SELF $RDMASTACK_WIRE_PEER $RDMASTACK_WIRE_PEER_KERNEL"
echo "--- PASS: TestWireBulk (1.00s)"
echo "    --- PASS: TestWireBulk/sub (1.00s)"
echo "BenchmarkWireGoodput/sub 	       1	 123 ns/op"`),
		fakeBinary(t, dir, "plain", []string{"TestA", "ExampleB"}, `echo "plain ran"; exit 1`),
		fakeBinary(t, dir, "ping", []string{"TestWirePing"}, `echo "--- SKIP: TestWirePing (0.00s)"`),
	}
	ctx := t.Context()
	list, err := listTests(ctx, bins, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"rsock": {"TestWireBulk", "TestWireClose"}, "ping": {"TestWirePing"}}
	if diff := cmp.Diff(want, list.wire); diff != "" || !list.other || len(list.bench) > 0 || list.otherBench {
		t.Errorf("listTests: other %v, bench %v, other bench %v, wire (-want +got):\n%s", list.other, list.bench, list.otherBench, diff)
	}
	benches, err := listTests(ctx, bins, []string{"-test.run", "^$", "-test.bench", "Wire/sub"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{"rsock": {"BenchmarkWireGoodput"}}, benches.bench); diff != "" || benches.other || benches.otherBench || len(benches.wire) > 0 {
		t.Errorf("listTests(-test.bench Wire/sub): other %v, other bench %v, wire %v, bench (-want +got):\n%s", benches.other, benches.otherBench, benches.wire, diff)
	}
	if all, err := listTests(ctx, bins, []string{"-test.run", "^$", "-test.bench", "."}); err != nil || !all.otherBench || all.other {
		t.Errorf("listTests(-test.bench .): other %v, other bench %v, %v; want false, true", all.other, all.otherBench, err)
	}
	only, err := listTests(ctx, bins, []string{"-test.run", "^TestWireB/x"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{"rsock": {"TestWireBulk"}}, only.wire); diff != "" || only.other {
		t.Errorf("listTests(^TestWireB): other %v, wire (-want +got):\n%s", only.other, diff)
	}

	w := &wireEnd{Side: 1, Peer: k61}
	list.bench = benches.bench
	script := pairPayload(k612, "/tmp/vm/out/w", w, bins, list, []string{"-test.run", "Bulk/sub", "-test.bench", "Wire/sub"})
	out, err := exec.Command("sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("payload: %v\n%s", err, out)
	}
	wantAll(t, "payload output", string(out),
		"args: -test.v -test.count=1 -test.run ^(TestWireBulk|TestWireClose)$/sub -test.bench ^(BenchmarkWireGoodput)$/sub -test.benchtime 1x\n",
		"env: 1 1 10.88.0.2 10.88.0.1 6.1.0-57-amd64\n",
		"VM-TEST-EXIT rsock 0\n",
		"VM-TEST-EXIT ping 0\n",
	)
	if strings.Contains(string(out), "plain") {
		t.Errorf("a binary without wire tests ran:\n%s", out)
	}
	rep := runReport{Name: "x"}
	for _, l := range strings.Split(string(out), "\n") {
		rep.Tally.line(l)
	}
	checkPair(&rep, list)
	wantProblems := []string{
		"ping: SKIP TestWirePing (a skip inside the VM counts as a failure)",
		"rsock: TestWireClose: no result on this side (a wire test runs on both sides of each pair)",
	}
	slices.Sort(rep.Tally.Problems)
	if diff := cmp.Diff(wantProblems, rep.Tally.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if rep.Tally.Passed != 3 || rep.Tally.bad() != 2 {
		t.Errorf("tally: %d passed, %d bad; want 3, 2", rep.Tally.Passed, rep.Tally.bad())
	}
}

// TestInitScriptWire: a wire guest sets up eth0 with its address and
// rxe0 on it, or siw0 alone on it in the pairs of the siw wire tests
// (rdmastack.siw=1): the init script's wire branch, run by the host's sh
// with the guest's root in a directory of its own and inroot echoing
// what it would run.
func TestInitScriptWire(t *testing.T) {
	wantAll(t, "init script", initScript, "rdmastack.wire=*) wire=${arg#*=} ;;")
	start := strings.Index(initScript, `if [ -n "$wire" ]; then`)
	end := strings.Index(initScript, `elif [ -n "$siw" ]; then`)
	if start < 0 || end < start {
		t.Fatal("the init script has no wire branch before its siw one")
	}
	for _, tc := range []struct {
		siw          string
		rdma, ibdevs string
	}{
		{"", "link add rxe0 type rxe netdev eth0\n", "rxe0"},
		{"1", "link add siw0 type siw netdev eth0\n", "siw0"},
	} {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "run/vm"), 0o755); err != nil {
			t.Fatal(err)
		}
		branch := strings.ReplaceAll(initScript[start:end]+"fi\n", "/mnt/", root+"/")
		script := "fail() { echo \"FAIL $*\"; exit 1; }\ninroot() { echo \"INROOT $1\"; }\n" +
			"wire=2 devices=1 siw=" + tc.siw + "\n" + branch + "echo \"IBDEVS $ibdevs\"\n"
		out, err := exec.Command("sh", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("siw=%q: the wire branch: %v\n%s", tc.siw, err, out)
		}
		wantAll(t, "wire branch's output", string(out), "INROOT ip -batch /run/vm/setup.ip\n", "IBDEVS "+tc.ibdevs+"\n")
		for file, want := range map[string]string{
			"setup.ip":   "link set lo up\naddr add " + wireNet + ".2/24 dev eth0\nlink set eth0 up\n",
			"setup.rdma": tc.rdma,
		} {
			got, err := os.ReadFile(filepath.Join(root, "run/vm", file))
			if err != nil || string(got) != want {
				t.Errorf("siw=%q: %s = %q (%v), want %q", tc.siw, file, got, err, want)
			}
		}
	}
	out, _ := exec.Command("sh", "-c", "fail() { echo \"FAIL $*\"; exit 1; }\nwire=1 devices=2\n"+
		strings.ReplaceAll(initScript[start:end]+"fi\n", "/mnt/", t.TempDir()+"/")).CombinedOutput()
	if !strings.Contains(string(out), "FAIL a wire guest has one device") {
		t.Errorf("a wire guest with 2 devices: %q, want a failure", out)
	}
}

// TestWireJobs: the rxe pairs and the siw pairs run in one pool, the rxe
// ones (the longest) first, each with its own tests; the siw pairs meet no
// kernel with itself when there are two kernels, and with one they do.
func TestWireJobs(t *testing.T) {
	list := testList{wire: map[string][]string{"rdma_rsocket": {"TestWireRsocketBulk", "TestWireSIWRsocketBulk"}}}
	type job struct{ Pair, Tests string }
	jobs := func(js []pairJob) []job {
		var out []job
		for _, j := range js {
			out = append(out, job{j.kernels[0].Release + "~" + j.kernels[1].Release, strings.Join(j.list.wire["rdma_rsocket"], ",")})
		}
		return out
	}
	a, b := k61.Release, k612.Release
	want := []job{
		{a + "~" + b, "TestWireRsocketBulk"}, {b + "~" + a, "TestWireRsocketBulk"}, {a + "~" + a, "TestWireRsocketBulk"},
		{a + "~" + b, "TestWireSIWRsocketBulk"}, {b + "~" + a, "TestWireSIWRsocketBulk"},
	}
	if diff := cmp.Diff(want, jobs(wireJobs(list, []kernel{k61, k612}, []kernel{k61}))); diff != "" {
		t.Errorf("two kernels (-want +got):\n%s", diff)
	}
	want = []job{{b + "~" + b, "TestWireRsocketBulk"}, {b + "~" + b, "TestWireSIWRsocketBulk"}}
	if diff := cmp.Diff(want, jobs(wireJobs(list, []kernel{k612}, []kernel{k612}))); diff != "" {
		t.Errorf("one kernel (-want +got):\n%s", diff)
	}
	for _, j := range wireJobs(list, []kernel{k61, k612}, nil) {
		if siw := j.list.wireSIW(); siw != strings.Contains(strings.Join(j.list.wire["rdma_rsocket"], ""), "SIW") {
			t.Errorf("%v: siw0 %v for %v", j.kernels, siw, j.list.wire)
		}
	}
}
