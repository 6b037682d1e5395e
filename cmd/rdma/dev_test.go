package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
)

func testDevice() nldev.Device {
	on := true
	return nldev.Device{
		Index: 0, Name: "rxe0", Ports: 1,
		Caps:         1<<0 | 1<<16 | 1<<21 | 1<<34,
		NodeGUID:     ib.GUIDFromUint64(0x025056fffe8a1b2c),
		SysImageGUID: ib.GUIDFromUint64(0x025056fffe8a1b2c),
		NodeType:     ib.NodeCA, Protocol: nldev.ProtocolRoCE,
		AdaptiveModeration: &on,
	}
}

func render(t *testing.T, o options, devs ...nldev.Device) string {
	t.Helper()
	var b bytes.Buffer
	p := newPrinter(&b, o)
	for _, d := range devs {
		printDevice(p, o, d)
		if err := p.end(); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDevText(t *testing.T) {
	d := testDevice()
	fw := d
	fw.Index, fw.Name, fw.FirmwareVersion = 3, "mlx5_0", "16.35.2000"
	got := render(t, options{}, d, fw)
	want := "0: rxe0: node_type ca protocol roce node_guid 0250:56ff:fe8a:1b2c sys_image_guid 0250:56ff:fe8a:1b2c \n" +
		"3: mlx5_0: node_type ca protocol roce fw 16.35.2000 node_guid 0250:56ff:fe8a:1b2c sys_image_guid 0250:56ff:fe8a:1b2c \n"
	if got != want {
		t.Fatalf("text:\n got %q\nwant %q", got, want)
	}

	got = render(t, options{details: true}, d)
	want = "0: rxe0: node_type ca protocol roce node_guid 0250:56ff:fe8a:1b2c sys_image_guid 0250:56ff:fe8a:1b2c adaptive-moderation on \n" +
		"    caps: <RESIZE_MAX_WR, UNKNOWN, MEM_MGT_EXTENSIONS, RAW_SCATTER_FCS>\n"
	if got != want {
		t.Fatalf("details:\n got %q\nwant %q", got, want)
	}

	got = render(t, options{details: true, oneline: true}, d)
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, `\    caps: <`) {
		t.Fatalf("oneline output %q is not one line", got)
	}
}

func TestDevJSON(t *testing.T) {
	d := testDevice()
	sub := d
	sub.Index, sub.Name, sub.Type, sub.Parent = 1, "smi0", nldev.DeviceTypeSMI, "rxe0"
	for _, o := range []options{{json: true}, {json: true, pretty: true}} {
		out := render(t, o, d, sub)
		var got []map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%q is not JSON: %v", out, err)
		}
		want := []map[string]any{
			{"ifindex": 0.0, "ifname": "rxe0", "node_type": "ca", "protocol": "roce",
				"node_guid": "0250:56ff:fe8a:1b2c", "sys_image_guid": "0250:56ff:fe8a:1b2c"},
			{"ifindex": 1.0, "ifname": "smi0", "node_type": "ca", "protocol": "roce",
				"node_guid": "0250:56ff:fe8a:1b2c", "sys_image_guid": "0250:56ff:fe8a:1b2c",
				"type": "smi", "parent": "rxe0"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("JSON (%+v) (-want +got):\n%s", o, diff)
		}
		if o.pretty != strings.Contains(out, "\n    ") {
			t.Fatalf("pretty=%v but output is %q", o.pretty, out)
		}
		if !strings.HasPrefix(out, "[") || !strings.Contains(out, `{"ifindex":0,"ifname":"rxe0","node_type":"ca","protocol":"roce"`) && !o.pretty {
			t.Fatalf("keys out of iproute2's order: %q", out)
		}
	}

	out := render(t, options{json: true, details: true}, d)
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got[0]["adaptive-moderation"] != true {
		t.Errorf("adaptive-moderation = %v, want JSON true", got[0]["adaptive-moderation"])
	}
	if diff := cmp.Diff([]any{"RESIZE_MAX_WR", "UNKNOWN", "MEM_MGT_EXTENSIONS", "RAW_SCATTER_FCS"}, got[0]["caps"]); diff != "" {
		t.Errorf("caps (-want +got):\n%s", diff)
	}

	if out := render(t, options{json: true}); out != "[]\n" {
		t.Errorf("no devices: %q, want []", out)
	}
}

func TestParseOptions(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want options
		rest []string
	}{
		{[]string{"-j", "dev", "show"}, options{json: true}, []string{"dev", "show"}},
		{[]string{"-jp", "dev"}, options{json: true, pretty: true}, []string{"dev"}},
		{[]string{"dev", "show", "-d", "rxe0"}, options{details: true}, []string{"dev", "show", "rxe0"}},
		{[]string{"-dd"}, options{details: true, driverDetails: true}, nil},
		{[]string{"--json", "--pre", "-o"}, options{json: true, pretty: true, oneline: true}, nil},
		{[]string{"-b", "cmds", "-f"}, options{batch: "cmds", force: true}, nil},
		{[]string{"-bcmds"}, options{batch: "cmds"}, nil},
		{[]string{"--", "-x"}, options{}, []string{"-x"}},
	} {
		o, rest, err := parseOptions(tt.args)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if o != tt.want || !cmp.Equal(rest, tt.rest) {
			t.Errorf("%q: got %+v %q, want %+v %q", tt.args, o, rest, tt.want, tt.rest)
		}
	}
	for _, bad := range [][]string{{"-x"}, {"-b"}, {"--nosuch"}} {
		if _, _, err := parseOptions(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestRunWithoutKernel(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, []string{"-V"}); err != nil || !strings.HasPrefix(out.String(), "rdma utility, iproute2-") {
		t.Fatalf("-V: %q, %v", out.String(), err)
	}
	out.Reset()
	if err := run(&out, []string{"help"}); err != nil || !strings.HasPrefix(out.String(), "Usage: rdma") {
		t.Fatalf("help: %q, %v", out.String(), err)
	}
	for _, args := range [][]string{{"nosuch"}, {"dev", "frobnicate"}, {"-Z"}} {
		if err := run(&out, args); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}

// TestDevShowNoRDMA: on a kernel without RDMA, "rdma dev show" fails with
// one line that says so; where RDMA exists it succeeds.
func TestDevShowNoRDMA(t *testing.T) {
	var out bytes.Buffer
	err := run(&out, []string{"dev", "show"})
	if c, dialErr := nldev.Dial(); dialErr == nil {
		c.Close()
		if err != nil {
			t.Fatalf("dev show on an RDMA kernel: %v", err)
		}
		return
	} else if !errors.Is(dialErr, nldev.ErrNoRDMA) {
		t.Skipf("cannot tell whether this kernel has RDMA: %v", dialErr)
	}
	if !errors.Is(err, nldev.ErrNoRDMA) {
		t.Fatalf("dev show without RDMA = %v, want nldev.ErrNoRDMA", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "no RDMA netlink support") {
		t.Fatalf("error %q is not one line naming the missing RDMA support", msg)
	}
	if out.Len() != 0 {
		t.Fatalf("printed %q on stdout", out.String())
	}
}
