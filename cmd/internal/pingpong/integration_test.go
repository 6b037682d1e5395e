package pingpong

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/cmd/internal/cmnode/cmtest"
	"github.com/rdmastack/rdmastack/device"
	"github.com/rdmastack/rdmastack/internal/testkit/rxetest"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs"
)

// side is one end of a pingpong: ours (in-process) or rdma-core's.
type side struct {
	oracle string // path of rdma-core's program, or of our binary (bin); empty for ours in-process
	bin    bool
	kind   Kind
}

func (s side) String() string {
	switch {
	case s.oracle == "":
		return "ours"
	case s.bin:
		return "ours-bin"
	}
	return "rdma-core"
}

var nextPort atomic.Int32

func init() { nextPort.Store(18600) }

// start runs one side with args and returns a function that waits for
// its output.
func (s side) start(args []string) func() (string, error) {
	if s.oracle == "" {
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- Main(&out, "ours", s.kind, args) }()
		return func() (string, error) {
			select {
			case err := <-done:
				return out.String(), err
			case <-time.After(20 * time.Second):
				return out.String(), fmt.Errorf("ours: no end after 20 s")
			}
		}
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(s.oracle, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Start()
	done := make(chan error, 1)
	if err != nil {
		done <- err
	} else {
		go func() { done <- cmd.Wait() }()
	}
	return func() (string, error) {
		select {
		case err := <-done:
			if err != nil {
				err = fmt.Errorf("%v: %s", err, errb.String())
			}
			return out.String(), err
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			return out.String(), fmt.Errorf("%v: no end after 20 s: %s", s, errb.String())
		}
	}
}

var (
	localRE  = regexp.MustCompile(`^  local address:  LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6})[,:] GID (\S+)$`)
	remoteRE = regexp.MustCompile(`^  remote address: LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\S+)$`)
	bytesRE  = regexp.MustCompile(`^(\d+) bytes in \d+\.\d\d seconds = \d+\.\d\d Mbit/sec$`)
	itersRE  = regexp.MustCompile(`^(\d+) iters in \d+\.\d\d seconds = (\d+\.\d\d) usec/iter$`)
)

// result is a side's parsed output.
type result struct {
	local, remote [][]string // per QP: LID, QPN, PSN, GID
	usecPerIter   float64
}

// parseOutput parses the output of a run over nqp QPs: a local address
// line for each, a remote one for each, and the two result lines.
func parseOutput(t testing.TB, who, out string, nqp, size, iters int) result {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2*nqp+2 {
		t.Fatalf("%s: %d lines of output, want %d:\n%s", who, len(lines), 2*nqp+2, out)
	}
	var r result
	for i := range nqp {
		m := localRE.FindStringSubmatch(lines[i])
		m2 := remoteRE.FindStringSubmatch(lines[nqp+i])
		if m == nil || m2 == nil {
			t.Fatalf("%s: output not in rdma-core's format:\n%s", who, out)
		}
		r.local, r.remote = append(r.local, m[1:]), append(r.remote, m2[1:])
	}
	b := bytesRE.FindStringSubmatch(lines[2*nqp])
	it := itersRE.FindStringSubmatch(lines[2*nqp+1])
	if b == nil || it == nil {
		t.Fatalf("%s: output not in rdma-core's format:\n%s", who, out)
	}
	if b[1] != strconv.Itoa(size*iters*2) || it[1] != strconv.Itoa(iters) {
		t.Fatalf("%s: %s bytes / %s iters, want %d / %d", who, b[1], it[1], size*iters*2, iters)
	}
	r.usecPerIter, _ = strconv.ParseFloat(it[2], 64)
	return r
}

// numQP is how many QPs a run of kind with extra's flags has.
func numQP(kind Kind, extra []string) int {
	if kind != SRQ {
		return 1
	}
	n := 16
	for i, a := range extra {
		if a == "-q" && i+1 < len(extra) {
			n, _ = strconv.Atoi(extra[i+1])
		}
	}
	return n
}

// pingpong runs server and client on rxe0 (the client connects to
// 127.0.0.1) and checks both outputs against each other.
func pingpong(t testing.TB, server, client side, size, iters int, extra ...string) (result, result) {
	t.Helper()
	{
		port := int(nextPort.Add(1))
		args := append([]string{"-d", "rxe0", "-g", "1", "-p", strconv.Itoa(port), "-s", strconv.Itoa(size), "-n", strconv.Itoa(iters), "-c"}, extra...)
		waitS := server.start(args)
		if err := cmtest.WaitTCPListen(uint16(port), 10*time.Second); err != nil {
			out, serr := waitS()
			t.Fatalf("%v server: %v (exit: %v)\n%s", server, err, serr, out)
		}
		waitC := client.start(append(args, "127.0.0.1"))
		outC, errC := waitC()
		outS, errS := waitS()
		if errS != nil || errC != nil {
			t.Fatalf("%v server: %v\n%s\n%v client: %v\n%s", server, errS, outS, client, errC, outC)
		}
		nqp := numQP(server.kind, extra)
		rs := parseOutput(t, server.String()+" server", outS, nqp, size, iters)
		rc := parseOutput(t, client.String()+" client", outC, nqp, size, iters)
		for q := range nqp {
			if !slices.Equal(rs.local[q], rc.remote[q]) || !slices.Equal(rc.local[q], rs.remote[q]) {
				t.Fatalf("the two sides disagree on the addresses:\nserver:\n%s\nclient:\n%s", outS, outC)
			}
			if rs.local[q][3] == "::" || rc.local[q][3] == "::" {
				t.Fatalf("-g 1 gave no GID:\nserver:\n%s\nclient:\n%s", outS, outC)
			}
		}
		return rs, rc
	}
}

func oracles(t testing.TB, kind Kind) (ours, theirs side) {
	return side{kind: kind}, side{oracle: testenv.Oracle(t, progs[kind]), kind: kind}
}

var kindNames = map[Kind]string{RC: "rc", UD: "ud", UC: "uc", SRQ: "srq"}

// TestIntegrationPingpong runs RC, UC, UD and SRQ pingpongs on rxe0 in
// event mode: ours against ours, and against rdma-core's in both roles,
// from 1 byte to 64 KiB (UD: to the port MTU; UC, which loses a message
// for good where a packet drops, to a few packets), SRQ over 1, 16 and
// 64 QPs, with rdma-core's -c check of the received pages. Nothing of
// ours is left behind.
func TestIntegrationPingpong(t *testing.T) {
	testenv.RequireRDMA(t)
	checkNoLeaks(t)
	for _, kind := range []Kind{RC, UD, UC, SRQ} {
		ours, theirs := oracles(t, kind)
		type run struct {
			size  int
			extra []string
		}
		var runs []run
		switch kind {
		case RC:
			runs = []run{{1, nil}, {4096, nil}, {65536, nil}}
		case UD:
			runs = []run{{1, nil}, {1024, nil}}
		case UC:
			runs = []run{{1, nil}, {4096, nil}}
		case SRQ:
			runs = []run{{1, nil}, {4096, []string{"-q", "1"}}, {64, []string{"-q", "64"}}}
		}
		for _, r := range runs {
			for _, pair := range [][2]side{{ours, ours}, {theirs, ours}, {ours, theirs}} {
				t.Run(fmt.Sprintf("%s/%d%s/%v-%v", kindNames[kind], r.size, strings.Join(r.extra, ""), pair[0], pair[1]), func(t *testing.T) {
					pingpong(t, pair[0], pair[1], r.size, 200, append([]string{"-e", "-r", "100"}, r.extra...)...)
				})
			}
		}
	}
}

// TestIntegrationPingpongBusyPoll runs a short busy-polling pingpong
// (about 8 ms a round trip under TCG) against rdma-core's: RC and UD
// with ours as the server, UC and SRQ in both roles.
func TestIntegrationPingpongBusyPoll(t *testing.T) {
	testenv.RequireRDMA(t)
	checkNoLeaks(t)
	for _, kind := range []Kind{RC, UD, UC, SRQ} {
		ours, theirs := oracles(t, kind)
		pingpong(t, ours, theirs, 64, 10)
		if kind == UC || kind == SRQ {
			pingpong(t, theirs, ours, 64, 10)
		}
	}
}

// TestIntegrationPingpongRefusals: for bad input on rxe0 ours prints
// what rdma-core's program prints on stderr, and exits 1 as it does.
func TestIntegrationPingpongRefusals(t *testing.T) {
	testenv.RequireRDMA(t)
	checkNoLeaks(t)
	for _, tc := range []struct {
		kind Kind
		args []string
	}{
		{UC, []string{"-d", "nosuch0"}},
		{UC, []string{"-d", "rxe0", "-g", "9999"}},
		{UC, []string{"-d", "rxe0", "-i", "2"}},
		{SRQ, []string{"-d", "nosuch0"}},
		{SRQ, []string{"-d", "rxe0", "-r", "15"}},
		{SRQ, []string{"-d", "rxe0", "-q", "256", "-r", "300"}},
		{SRQ, []string{"-d", "rxe0", "-g", "9999"}},
		{SRQ, []string{"-d", "rxe0", "-i", "2", "-q", "2"}},
	} {
		var wantOut, wantErr bytes.Buffer
		cmd := exec.Command(testenv.Oracle(t, progs[tc.kind]), tc.args...)
		cmd.Stdout, cmd.Stderr = &wantOut, &wantErr
		err := cmd.Run()
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != 1 {
			t.Fatalf("rdma-core's %s %q: %v, want exit status 1", progs[tc.kind], tc.args, err)
		}
		stdout, stderr, status := mainOutput(tc.kind, tc.args)
		if status != 1 || stderr != wantErr.String() || stdout != wantOut.String() {
			t.Errorf("%s %q: status %d, stderr %q, stdout %q; rdma-core's: status 1, stderr %q, stdout %q",
				progs[tc.kind], tc.args, status, stderr, stdout, wantErr.String(), wantOut.String())
		}
	}
}

// TestIntegrationPingpongPeerGone: a peer killed mid-run (rdma-core's,
// as server or client) ends ours with an error and exit status 1 where
// rdma-core's would wait for ever: a failed completion where a send
// was outstanding (RC retries run out), else the idle timeout.
func TestIntegrationPingpongPeerGone(t *testing.T) {
	testenv.RequireRDMA(t)
	checkNoLeaks(t)
	saved := idleTimeout
	idleTimeout = 2 * time.Second
	t.Cleanup(func() { idleTimeout = saved })
	for _, tc := range []struct {
		kind       Kind
		oursServer bool
		extra      []string
	}{
		{UC, false, []string{"-e"}},
		{UC, true, nil},
		{SRQ, false, nil},
		{SRQ, true, []string{"-e", "-q", "4"}},
		{RC, false, []string{"-e"}},
	} {
		t.Run(fmt.Sprintf("%s/oursServer=%v/%s", kindNames[tc.kind], tc.oursServer, strings.Join(tc.extra, "")), func(t *testing.T) {
			port := int(nextPort.Add(1))
			args := append([]string{"-d", "rxe0", "-g", "1", "-p", strconv.Itoa(port), "-n", "100000000", "-s", "64"}, tc.extra...)
			theirArgs, ourArgs := args, append(args[:len(args):len(args)], "127.0.0.1")
			if tc.oursServer {
				theirArgs, ourArgs = ourArgs, args
			}
			var out testenv.Buffer
			done := make(chan error, 1)
			var cmd *exec.Cmd
			if tc.oursServer {
				go func() { done <- Main(&out, "ours", tc.kind, ourArgs) }()
				if err := cmtest.WaitTCPListen(uint16(port), 10*time.Second); err != nil {
					t.Fatal(err)
				}
				cmd = testenv.Start(t, progs[tc.kind], theirArgs...)
			} else {
				cmd = testenv.Start(t, progs[tc.kind], theirArgs...)
				if err := cmtest.WaitTCPListen(uint16(port), 10*time.Second); err != nil {
					t.Fatal(err)
				}
				go func() { done <- Main(&out, "ours", tc.kind, ourArgs) }()
			}
			testenv.WaitFor(t, "the exchange", func() bool { return strings.Contains(out.String(), "remote address") })
			time.Sleep(300 * time.Millisecond) // mid-run
			testenv.Stop(cmd)
			select {
			case err := <-done:
				var ee *ExitError
				if !errors.As(err, &ee) || !(strings.HasPrefix(ee.Msg, "Failed status ") ||
					ee.Msg == "No completion for 2s: the peer is gone or a message was lost") {
					t.Fatalf("ours after its peer went: %v, want a failed completion or the idle timeout\n%s", err, out.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("ours still runs 20 s after its peer went:\n%s", out.String())
			}
		})
	}
}

// checkNoLeaks makes the test fail if what it ran left open fds,
// goroutines or kernel objects on rxe0 (RDMA netlink's resource summary,
// which counts rdma-core's processes' objects too until they end).
func checkNoLeaks(t *testing.T) { checkNoLeaksOn(t, "rxe0") }

// checkNoLeaksOn is checkNoLeaks on device dev.
func checkNoLeaksOn(t *testing.T, dev string) {
	t.Helper()
	// The device list's event sockets stay open for the process.
	if _, err := device.List(); err != nil {
		t.Fatal(err)
	}
	d, err := uverbs.DeviceByName(dev)
	if err != nil {
		t.Fatal(err)
	}
	rxetest.NoLeaks(t, &d.Index)
}

// TestIntegrationPingpongErrors: rdma-core's error texts for what rxe
// lacks, and for a UD run without a GID (RoCE needs a GRH).
func TestIntegrationPingpongErrors(t *testing.T) {
	testenv.RequireRDMA(t)
	for _, tc := range []struct {
		kind Kind
		args []string
		want string
	}{
		{RC, []string{"-d", "rxe0", "-o"}, "The device isn't ODP capable or does not support RC send and receive with ODP"},
		{RC, []string{"-d", "rxe0", "-t"}, "The device isn't completion timestamp capable"},
		{RC, []string{"-d", "nosuch0"}, "IB device nosuch0 not found"},
		{UD, []string{"-d", "rxe0", "-s", "2048"}, "Requested size larger than port MTU (1024)"},
	} {
		var out bytes.Buffer
		err := Main(&out, "ours", tc.kind, tc.args)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
