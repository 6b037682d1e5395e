package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdmastack/rdmastack/nldev"
)

// testFRMRPools: two pools as a kernel reports them (the second a
// kernel-internal one with a driver attribute) and a pool without a key.
func testFRMRPools() []nldev.FRMRPool {
	return []nldev.FRMRPool{
		{DevIndex: 3, DevName: "mlx5_0", Key: &nldev.FRMRPoolKey{NumDMABlocks: 0x100, AccessFlags: 0x1f},
			QueueHandles: ptrTo(uint32(12)), InUse: ptrTo(uint64(4)), MaxInUse: ptrTo(uint64(20)), PinnedHandles: ptrTo(uint32(2))},
		{DevIndex: 3, DevName: "mlx5_0", Key: &nldev.FRMRPoolKey{VendorKey: 0xab, NumDMABlocks: 1, ATS: true},
			KernelVendorKey: ptrTo(uint64(7)),
			QueueHandles:    ptrTo(uint32(0)), InUse: ptrTo(uint64(0)), MaxInUse: ptrTo(uint64(1 << 33)), PinnedHandles: ptrTo(uint32(0)),
			Driver: []nldev.DriverAttr{{Key: "x", Value: nldev.DriverU32(5)}}},
		{DevIndex: 3, DevName: "mlx5_0", QueueHandles: ptrTo(uint32(1))},
	}
}

func renderFRMR(t *testing.T, o options, filter ...string) string {
	t.Helper()
	fs, err := parseFilters(filter, frmrKind.filterDefs())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rs := &resSession{session: &session{o: o}, p: newPrinter(&out, o), fs: fs}
	if err := frmrKind.printAll(rs, testFRMRPools(), 0); err != nil {
		t.Fatal(err)
	}
	if err := rs.p.flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestPrintFRMRPoolsText pins the text lines against iproute2 HEAD's
// rdma/res-frmr-pools.c (no kernel at hand has FRMR pools).
func TestPrintFRMRPoolsText(t *testing.T) {
	for _, tc := range []struct {
		o    options
		want string
	}{
		{options{}, "dev mlx5_0 key 0:100:1f:0 queue 12 in_use 4 max_in_use 20 pinned 2 \n" +
			"dev mlx5_0 key ab:1:0:1 queue 0 in_use 0 max_in_use 8589934592 pinned 0 \n" +
			"dev mlx5_0 queue 1 \n"},
		{options{details: true}, "dev mlx5_0 key 0:100:1f:0 ats 0 access_flags 31 vendor_key 0 num_dma_blocks 256 queue 12 in_use 4 max_in_use 20 pinned 2 \n" +
			"dev mlx5_0 key ab:1:0:1 ats 1 access_flags 0 vendor_key 171 num_dma_blocks 1 kernel_vendor_key 7 queue 0 in_use 0 max_in_use 8589934592 pinned 0 \n" +
			"dev mlx5_0 queue 1 \n"},
		{options{details: true, driverDetails: true}, "dev mlx5_0 key 0:100:1f:0 ats 0 access_flags 31 vendor_key 0 num_dma_blocks 256 queue 12 in_use 4 max_in_use 20 pinned 2 \n" +
			"dev mlx5_0 key ab:1:0:1 ats 1 access_flags 0 vendor_key 171 num_dma_blocks 1 kernel_vendor_key 7 queue 0 in_use 0 max_in_use 8589934592 pinned 0 \n    drv_x 5 \n" +
			"dev mlx5_0 queue 1 \n"},
	} {
		if got := renderFRMR(t, tc.o); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.o, got, tc.want)
		}
	}
}

func TestPrintFRMRPoolsJSON(t *testing.T) {
	for _, tc := range []struct {
		o    options
		want []map[string]any
	}{
		{options{json: true}, []map[string]any{
			{"ifindex": 3.0, "ifname": "mlx5_0", "key": "0:100:1f:0", "queue": 12.0, "in_use": 4.0, "max_in_use": 20.0, "pinned": 2.0},
			{"ifindex": 3.0, "ifname": "mlx5_0", "key": "ab:1:0:1", "queue": 0.0, "in_use": 0.0, "max_in_use": 8589934592.0, "pinned": 0.0},
			{"ifindex": 3.0, "ifname": "mlx5_0", "queue": 1.0},
		}},
		{options{json: true, details: true, driverDetails: true}, []map[string]any{
			{"ifindex": 3.0, "ifname": "mlx5_0", "key": "0:100:1f:0", "ats": 0.0, "access_flags": 31.0, "vendor_key": 0.0,
				"num_dma_blocks": 256.0, "queue": 12.0, "in_use": 4.0, "max_in_use": 20.0, "pinned": 2.0},
			{"ifindex": 3.0, "ifname": "mlx5_0", "key": "ab:1:0:1", "ats": 1.0, "access_flags": 0.0, "vendor_key": 171.0,
				"num_dma_blocks": 1.0, "kernel_vendor_key": 7.0, "queue": 0.0, "in_use": 0.0, "max_in_use": 8589934592.0, "pinned": 0.0,
				"drv_x": 5.0},
			{"ifindex": 3.0, "ifname": "mlx5_0", "queue": 1.0},
		}},
	} {
		out := renderFRMR(t, tc.o)
		var got []map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%+v: %v in %q", tc.o, err, out)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.o, diff)
		}
		// Key order follows the text order.
		if i, j := strings.Index(out, `"key"`), strings.Index(out, `"queue"`); i < 0 || j < i {
			t.Errorf("key order: %s", out)
		}
	}
	// -p indents (the array's layout is the printer's, tested with dev).
	if out := renderFRMR(t, options{json: true, pretty: true}); !strings.Contains(out, "\n        \"key\": \"0:100:1f:0\",\n") {
		t.Errorf("pretty: %q", out)
	}
}

// TestFRMRFilters: every filter of iproute2's list, with its quirks: key
// filters do not hide a pool without a key; counters compare their low
// 32 bits.
func TestFRMRFilters(t *testing.T) {
	for _, tc := range []struct {
		filter []string
		want   string // the pools shown, by their first counter: "q12 q0 q1"
	}{
		{nil, "q12 q0 q1"},
		{[]string{"queue", "12"}, "q12"},
		{[]string{"ats", "1"}, "q0 q1"},
		{[]string{"access_flags", "31"}, "q12 q1"},
		{[]string{"vendor_key", "171"}, "q0 q1"},
		{[]string{"num_dma_blocks", "200-300"}, "q12 q1"},
		{[]string{"in_use", "0-5"}, "q12 q0"},
		{[]string{"max_in_use", "0"}, "q0"}, // 1<<33 seen as its low 32 bits
		{[]string{"pinned", "2,7"}, "q12"},
		{[]string{"pin", "0", "q", "0"}, "q0"}, // keys are prefixes
		{[]string{"dev", "mlx5_0", "queue", "1"}, "q1"},
	} {
		out := renderFRMR(t, options{}, tc.filter...)
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var q int
			if i := strings.Index(line, "queue "); i >= 0 {
				fmt.Sscanf(line[i:], "queue %d", &q)
				got = append(got, fmt.Sprintf("q%d", q))
			}
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("filter %q: %s, want %s", tc.filter, s, tc.want)
		}
	}
	for args, want := range map[string]string{
		"users 1":         "Unsupported filter option: users",
		"ats yes":         `ats filter accepts "1234567890,-" characters only`,
		"queue":           "No filter data was supplied to filter option queue",
		"in_use 1 pinned": "There is filter option without data",
	} {
		if _, err := parseFilters(strings.Fields(args), frmrKind.filterDefs()); err == nil || err.Error() != want {
			t.Errorf("parseFilters(%s) = %v, want %q", args, err, want)
		}
	}
}

// TestFRMRSetArgs: the arguments refused before or without a kernel, with
// iproute2's messages.
func TestFRMRSetArgs(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, []string{"resource", "set"}); err != nil || !strings.Contains(out.String(), "resource set frmr_pools dev DEV aging AGING_PERIOD") {
		t.Errorf("res set: %q, %v", out.String(), err)
	}
	for args, want := range map[string]string{
		"res set nosuch":                  "Unknown resource set command 'nosuch'.",
		"res set frmr_pools":              "Please provide device name.",
		"res set frmr_pools rxe0 aging 5": "Please provide device name.",
		"res set frmr_pools dev":          "No device name was supplied",
	} {
		err := run(&out, strings.Fields(args))
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	for key, want := range map[string]string{
		"1:2:3":                   "Invalid pool key: 1:2:3, expected 4 fields",
		"x:0:0:0":                 "Invalid pool key: x:0:0:0",
		"1:0:100000000:0":         "Pool key field at index 2 value out of range",
		"1:0:0:2":                 "Pool key field at index 3 value out of range",
		"10000000000000000:0:0:0": "Invalid pool key: 10000000000000000:0:0:0",
		"1:0:0:0:5":               "Unsupported pool attributes passed in pool key",
	} {
		_, err := nldev.ParseFRMRPoolKey(key)
		if err = frmrKeyError(key, err); err == nil || err.Error() != want {
			t.Errorf("key %q: %v, want %q", key, err, want)
		}
	}
}
