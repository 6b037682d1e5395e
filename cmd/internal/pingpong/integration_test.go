package pingpong

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmastack/rdmastack/internal/testenv"
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
	local, remote []string // LID, QPN, PSN, GID
	usecPerIter   float64
}

func parseOutput(t testing.TB, who, out string, size, iters int) result {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%s: %d lines of output, want 4:\n%s", who, len(lines), out)
	}
	var r result
	m := localRE.FindStringSubmatch(lines[0])
	m2 := remoteRE.FindStringSubmatch(lines[1])
	b := bytesRE.FindStringSubmatch(lines[2])
	it := itersRE.FindStringSubmatch(lines[3])
	if m == nil || m2 == nil || b == nil || it == nil {
		t.Fatalf("%s: output not in rdma-core's format:\n%s", who, out)
	}
	if b[1] != strconv.Itoa(size*iters*2) || it[1] != strconv.Itoa(iters) {
		t.Fatalf("%s: %s bytes / %s iters, want %d / %d", who, b[1], it[1], size*iters*2, iters)
	}
	r.local, r.remote = m[1:], m2[1:]
	r.usecPerIter, _ = strconv.ParseFloat(it[2], 64)
	return r
}

// pingpong runs server and client on rxe0 (the client connects to
// 127.0.0.1) and checks both outputs against each other.
func pingpong(t testing.TB, server, client side, size, iters int, extra ...string) (result, result) {
	t.Helper()
	{
		port := int(nextPort.Add(1))
		args := append([]string{"-d", "rxe0", "-g", "1", "-p", strconv.Itoa(port), "-s", strconv.Itoa(size), "-n", strconv.Itoa(iters), "-c"}, extra...)
		waitS := server.start(args)
		if err := waitListen(port, 10*time.Second); err != nil {
			out, serr := waitS()
			t.Fatalf("%v server: %v (exit: %v)\n%s", server, err, serr, out)
		}
		waitC := client.start(append(args, "127.0.0.1"))
		outC, errC := waitC()
		outS, errS := waitS()
		if errS != nil || errC != nil {
			t.Fatalf("%v server: %v\n%s\n%v client: %v\n%s", server, errS, outS, client, errC, outC)
		}
		rs := parseOutput(t, server.String()+" server", outS, size, iters)
		rc := parseOutput(t, client.String()+" client", outC, size, iters)
		for i := range rs.local {
			if rs.local[i] != rc.remote[i] || rc.local[i] != rs.remote[i] {
				t.Fatalf("the two sides disagree on the addresses:\nserver:\n%s\nclient:\n%s", outS, outC)
			}
		}
		if rs.local[3] == "::" || rc.local[3] == "::" {
			t.Fatalf("-g 1 gave no GID:\nserver:\n%s\nclient:\n%s", outS, outC)
		}
		return rs, rc
	}
}

func oracles(t testing.TB, kind Kind) (ours, theirs side) {
	prog := "ibv_rc_pingpong"
	if kind == UD {
		prog = "ibv_ud_pingpong"
	}
	return side{kind: kind}, side{oracle: testenv.Oracle(t, prog), kind: kind}
}

// TestIntegrationPingpong runs RC and UD pingpongs on rxe0 in event
// mode: ours against ours, and against rdma-core's in both roles, from 1
// byte to 64 KiB (UD: to the port MTU), with rdma-core's -c check of the
// received pages.
func TestIntegrationPingpong(t *testing.T) {
	testenv.RequireRDMA(t)
	for _, kind := range []Kind{RC, UD} {
		ours, theirs := oracles(t, kind)
		sizes := []int{1, 4096, 65536}
		if kind == UD {
			sizes = []int{1, 1024}
		}
		name := map[Kind]string{RC: "rc", UD: "ud"}[kind]
		for _, size := range sizes {
			for _, pair := range [][2]side{{ours, ours}, {theirs, ours}, {ours, theirs}} {
				t.Run(fmt.Sprintf("%s/%d/%v-%v", name, size, pair[0], pair[1]), func(t *testing.T) {
					pingpong(t, pair[0], pair[1], size, 200, "-e", "-r", "100")
				})
			}
		}
	}
}

// TestIntegrationPingpongBusyPoll runs a short busy-polling pingpong
// (about 8 ms a round trip under TCG) against rdma-core's.
func TestIntegrationPingpongBusyPoll(t *testing.T) {
	testenv.RequireRDMA(t)
	for _, kind := range []Kind{RC, UD} {
		ours, theirs := oracles(t, kind)
		pingpong(t, ours, theirs, 64, 10)
	}
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

// waitListen waits until a TCP socket listens on port (read from
// /proc/net/tcp and tcp6, so that no connection is used up).
func waitListen(port int, d time.Duration) error {
	want := fmt.Sprintf(":%04X ", port)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			b, _ := os.ReadFile(f)
			for _, line := range strings.Split(string(b), "\n") {
				fields := strings.Fields(line)
				if len(fields) > 3 && strings.HasSuffix(fields[1]+" ", want) && fields[3] == "0A" {
					return nil
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on port %d after %v", port, d)
}
