package nldev

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/nldev/internal/nlabi"
)

// tlv builds one attribute by hand (not with mdlayher's encoder, so the
// encoding tests do not check the encoder against itself): the length,
// the type with its flags, the payload, padding to 4 bytes.
func tlv(typ uint16, payload []byte) []byte {
	b := binary.NativeEndian.AppendUint16(nil, uint16(4+len(payload)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, payload...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func le32(v uint32) []byte { return binary.NativeEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.NativeEndian.AppendUint64(nil, v) }

// frmrKeyTLVs is a key nest's content as the kernel writes it (ATS,
// ACCESS_FLAGS, VENDOR_KEY, NUM_DMA_BLOCKS), with a PAD attribute before
// the u64s as nla_put_u64_64bit adds on architectures that align them.
func frmrKeyTLVs(k FRMRPoolKey, pad bool, kvk *uint64) []byte {
	var ats byte
	if k.ATS {
		ats = 1
	}
	b := tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ATS, []byte{ats})
	b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ACCESS_FLAGS, le32(k.AccessFlags))...)
	if pad {
		b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_PAD, nil)...)
	}
	b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_VENDOR_KEY, le64(k.VendorKey))...)
	b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_NUM_DMA_BLOCKS, le64(k.NumDMABlocks))...)
	if kvk != nil {
		b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_KERNEL_VENDOR_KEY, le64(*kvk))...)
	}
	return b
}

// frmrEntry is one FRMR_POOL_ENTRY as the kernel's dump writes it: the
// entry without NLA_F_NESTED, the key nest with it.
func frmrEntry(k FRMRPoolKey, queue uint32, inUse, maxInUse uint64, pinned uint32, extra []byte) []byte {
	b := tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY|unix.NLA_F_NESTED, frmrKeyTLVs(k, true, nil))
	b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_QUEUE_HANDLES, le32(queue))...)
	b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_MAX_IN_USE, le64(maxInUse))...)
	b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_IN_USE, le64(inUse))...)
	b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_PINNED_HANDLES, le32(pinned))...)
	b = append(b, extra...)
	return tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_ENTRY, b)
}

// frmrMsg is one message of the dump of device 2 "mlx0": the table nest
// without NLA_F_NESTED, as nla_nest_start_noflag writes it.
func frmrMsg(req netlink.Message, entries ...[]byte) netlink.Message {
	b := tlv(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, le32(2))
	b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_DEV_NAME, []byte("mlx0\x00"))...)
	b = append(b, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOLS, bytes.Join(entries, nil))...)
	return netlink.Message{Header: netlink.Header{Type: req.Header.Type}, Data: b}
}

// frmrKernel is a fake kernel with (has) or without the FRMR commands and
// one device, index 2 "mlx0"; it records the requests.
type frmrKernel struct {
	t        *testing.T
	has      bool
	reqs     []netlink.Message
	setErrno unix.Errno // what a SET for device 2 answers
	pools    [][][]byte // the dump's messages, each a list of entries
}

func (k *frmrKernel) answer(req netlink.Message) ([]netlink.Message, unix.Errno) {
	k.reqs = append(k.reqs, req)
	a := reqAttrs(k.t, req)
	dev, ok := a[nlabi.RDMA_NLDEV_ATTR_DEV_INDEX]
	switch cmdOf(req) {
	case nlabi.RDMA_NLDEV_CMD_GET:
		if req.Header.Flags&netlink.Dump != 0 {
			return deviceReply(k.t, netlink.Message{Header: req.Header, Data: encode(k.t, func(ae *netlink.AttributeEncoder) {
				ae.Uint32(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, 2)
			})})
		}
		return deviceReply(k.t, req)
	case nlabi.RDMA_NLDEV_CMD_FRMR_POOLS_GET:
		if !k.has || req.Header.Flags&netlink.Dump == 0 || !ok || u32At(dev) != 2 {
			return nil, unix.EINVAL
		}
		var out []netlink.Message
		for _, m := range k.pools {
			out = append(out, frmrMsg(req, m...))
		}
		return out, 0
	case nlabi.RDMA_NLDEV_CMD_FRMR_POOLS_SET:
		if !k.has || !ok || u32At(dev) != 2 {
			return nil, unix.EINVAL
		}
		if k.setErrno != 0 {
			return nil, k.setErrno
		}
		return []netlink.Message{kernelError(req, 0)}, 0
	}
	return nil, unix.EINVAL
}

func dialFRMR(t *testing.T, has bool) (*Client, *frmrKernel) {
	k := &frmrKernel{t: t, has: has}
	return dialFake(t, k.answer), k
}

func TestFRMRRequestEncoding(t *testing.T) {
	c, k := dialFRMR(t, true)
	key := FRMRPoolKey{VendorKey: 0x1122334455667788, NumDMABlocks: 0x100, AccessFlags: 0x1f, ATS: true}
	if err := c.SetFRMRPinned(2, key, 7); err != nil {
		t.Fatal(err)
	}
	if err := c.SetFRMRAgingPeriod(2, 90); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FRMRPools(2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FRMRPools(2, DriverDetails); err != nil {
		t.Fatal(err)
	}
	wantKey := tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ATS, []byte{1})
	wantKey = append(wantKey, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_ACCESS_FLAGS, le32(0x1f))...)
	wantKey = append(wantKey, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_VENDOR_KEY, le64(0x1122334455667788))...)
	wantKey = append(wantKey, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_NUM_DMA_BLOCKS, le64(0x100))...)
	devAttr := tlv(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, le32(2))
	for i, want := range []struct {
		typ   uint16
		flags netlink.HeaderFlags
		data  []byte
	}{
		{5<<10 | 30, netlink.Request | netlink.Acknowledge, bytes.Join([][]byte{devAttr,
			tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_PINNED_HANDLES, le32(7)),
			tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY|unix.NLA_F_NESTED, wantKey)}, nil)},
		{5<<10 | 30, netlink.Request | netlink.Acknowledge, append(devAttr,
			tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOLS_AGING_PERIOD, le32(90))...)},
		{5<<10 | 29, netlink.Request | netlink.Dump, devAttr},
		{5<<10 | 29, netlink.Request | netlink.Dump, append(append([]byte{}, devAttr...),
			tlv(nlabi.RDMA_NLDEV_ATTR_DRIVER_DETAILS, []byte{1})...)},
	} {
		if i >= len(k.reqs) {
			t.Fatalf("%d requests, want %d", len(k.reqs), i+1)
		}
		r := k.reqs[i]
		if uint16(r.Header.Type) != want.typ || r.Header.Flags != want.flags || !bytes.Equal(r.Data, want.data) {
			t.Errorf("request %d: type %d flags %v\n% x\nwant type %d flags %v\n% x", i,
				r.Header.Type, r.Header.Flags, r.Data, want.typ, want.flags, want.data)
		}
	}
	if len(k.reqs) != 4 {
		t.Errorf("%d requests sent, want 4 (no probes on a kernel that answered)", len(k.reqs))
	}
}

func TestFRMRPoolsDecode(t *testing.T) {
	c, k := dialFRMR(t, true)
	drv := tlv(nlabi.RDMA_NLDEV_ATTR_DRIVER, bytes.Join([][]byte{
		tlv(nlabi.RDMA_NLDEV_ATTR_DRIVER_STRING, []byte("hw_pool\x00")),
		tlv(nlabi.RDMA_NLDEV_ATTR_DRIVER_PRINT_TYPE, []byte{nlabi.RDMA_NLDEV_PRINT_TYPE_HEX}),
		tlv(nlabi.RDMA_NLDEV_ATTR_DRIVER_U32, le32(0xab)),
	}, nil))
	k1 := FRMRPoolKey{VendorKey: 1, NumDMABlocks: 0x40, AccessFlags: 0x7, ATS: false}
	k2 := FRMRPoolKey{VendorKey: 0, NumDMABlocks: 1 << 40, AccessFlags: 0, ATS: true}
	k3 := FRMRPoolKey{VendorKey: ^uint64(0), NumDMABlocks: 2, AccessFlags: 0xffffffff, ATS: true}
	kvk := uint64(0x99)
	kernelPool := tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_ENTRY, bytes.Join([][]byte{
		tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY|unix.NLA_F_NESTED, frmrKeyTLVs(k3, false, &kvk)),
		tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_QUEUE_HANDLES, le32(1)),
		tlv(999, []byte{1, 2, 3}), // an attribute of a later kernel
	}, nil))
	k.pools = [][][]byte{
		{frmrEntry(k1, 5, 3, 9, 2, drv), frmrEntry(k2, 0, 0, 0, 0, nil)},
		{kernelPool, tlv(998, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_QUEUE_HANDLES, le32(5)))}, // not an entry: skipped
	}
	got, err := c.FRMRPools(2, DriverDetails)
	if err != nil {
		t.Fatal(err)
	}
	want := []FRMRPool{
		{DevIndex: 2, DevName: "mlx0", Key: &k1, QueueHandles: ptr[uint32](5), InUse: ptr[uint64](3), MaxInUse: ptr[uint64](9),
			PinnedHandles: ptr[uint32](2), Driver: []DriverAttr{{Key: "hw_pool", PrintType: DriverPrintHex, Value: DriverU32(0xab)}}},
		{DevIndex: 2, DevName: "mlx0", Key: &k2, QueueHandles: ptr[uint32](0), InUse: ptr[uint64](0), MaxInUse: ptr[uint64](0),
			PinnedHandles: ptr[uint32](0)},
		{DevIndex: 2, DevName: "mlx0", Key: &k3, KernelVendorKey: &kvk, QueueHandles: ptr[uint32](1)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pools (-want +got):\n%s", diff)
	}

	// A device without pools: the kernel sends nothing but DONE.
	k.pools = nil
	got, err = c.FRMRPools(2)
	if err != nil || len(got) != 0 {
		t.Errorf("no pools: %v, %v", got, err)
	}

	// Replies that break the protocol.
	for name, b := range map[string][]byte{
		"no device":      tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOLS, nil),
		"short u32":      append(tlv(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, le32(2)), tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOLS, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_ENTRY, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_QUEUE_HANDLES, []byte{1})))...),
		"short key u64":  append(tlv(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, le32(2)), tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOLS, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_ENTRY, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_KEY_VENDOR_KEY, le32(1)))))...),
		"truncated tlv":  {8, 0, 1, 0, 2},
		"bad entry nest": append(tlv(nlabi.RDMA_NLDEV_ATTR_DEV_INDEX, le32(2)), tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOLS, tlv(nlabi.RDMA_NLDEV_ATTR_FRMR_POOL_ENTRY, []byte{9, 0, 1, 0}))...),
	} {
		if ps, err := decodeFRMRPools(b); err == nil {
			t.Errorf("%s: decoded %+v", name, ps)
		}
	}
}

func TestFRMRNotSupported(t *testing.T) {
	c, k := dialFRMR(t, false)
	key := FRMRPoolKey{NumDMABlocks: 1}
	for name, call := range map[string]func() error{
		"pools":        func() error { return second(c.FRMRPools(2)) },
		"pools of 9":   func() error { return second(c.FRMRPools(9)) },
		"aging":        func() error { return c.SetFRMRAgingPeriod(2, 10) },
		"aging of 9":   func() error { return c.SetFRMRAgingPeriod(9, 10) },
		"pinned":       func() error { return c.SetFRMRPinned(2, key, 1) },
		"with details": func() error { return second(c.FRMRPools(2, DriverDetails)) },
	} {
		err := call()
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "Linux 7.0") || errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want ErrNotSupported naming Linux 7.0", name, err)
		}
	}
	// The first call sent its request, then probed (device dump, FRMR dump
	// of the first device, that device again); the answer is kept, so the
	// other calls sent nothing.
	n := len(k.reqs)
	if n != 4 {
		t.Errorf("%d requests for six calls, want 4: the probe was not kept", n)
	}
	if err := c.SetFRMRAgingPeriod(2, 10); !errors.Is(err, ErrNotSupported) || len(k.reqs) != n {
		t.Errorf("after the probe: %v, %d new requests", err, len(k.reqs)-n)
	}

	// The probe must not take a kernel that has the commands for one that
	// lacks them: an unknown device and a refused value are EINVALs too.
	c, k = dialFRMR(t, true)
	k.setErrno = unix.EINVAL // a device without FRMR pools refuses aging
	if _, err := c.FRMRPools(9); !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrNotSupported) {
		t.Errorf("pools of an unknown device: %v", err)
	}
	if err := c.SetFRMRAgingPeriod(9, 5); !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrNotSupported) {
		t.Errorf("aging of an unknown device: %v", err)
	}
	err := c.SetFRMRAgingPeriod(2, 5)
	if !errors.Is(err, unix.EINVAL) || errors.Is(err, ErrNotSupported) || errors.Is(err, os.ErrNotExist) {
		t.Errorf("aging refused by the kernel: %v", err)
	}
	k.setErrno = unix.EPERM
	if err := c.SetFRMRPinned(2, key, 3); !errors.Is(err, unix.EPERM) {
		t.Errorf("pinned without CAP_NET_ADMIN: %v", err)
	}
}

func TestFRMRBadInput(t *testing.T) {
	c, k := dialFRMR(t, true)
	for name, err := range map[string]error{
		"zero aging":      c.SetFRMRAgingPeriod(2, 0),
		"unknown options": second(c.FRMRPools(2, ResourceOption(0x40))),
	} {
		var e *Error
		if !errors.Is(err, unix.EINVAL) || !errors.As(err, &e) || errors.Is(err, ErrNotSupported) {
			t.Errorf("%s: %v, want EINVAL", name, err)
		}
	}
	if len(k.reqs) != 0 {
		t.Errorf("%d requests sent for input refused up front", len(k.reqs))
	}
	var closed Client
	if _, err := closed.FRMRPools(2); !errors.Is(err, unix.EBADF) {
		t.Errorf("closed client: %v", err)
	}
}

func TestFRMRPoolKeyText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want FRMRPoolKey
		text string // String of the result
	}{
		{"0:1:0:0", FRMRPoolKey{NumDMABlocks: 1}, "0:1:0:0"},
		{"ff:0x10:7:1", FRMRPoolKey{VendorKey: 0xff, NumDMABlocks: 0x10, AccessFlags: 7, ATS: true}, "ff:10:7:1"},
		{"FFFFFFFFFFFFFFFF:0:FFFFFFFF:1", FRMRPoolKey{VendorKey: ^uint64(0), AccessFlags: 0xffffffff, ATS: true}, "ffffffffffffffff:0:ffffffff:1"},
		{"1:2:3:0:", FRMRPoolKey{VendorKey: 1, NumDMABlocks: 2, AccessFlags: 3}, "1:2:3:0"},
		{"1:2:3:0:0:0x0", FRMRPoolKey{VendorKey: 1, NumDMABlocks: 2, AccessFlags: 3}, "1:2:3:0"},
	} {
		got, err := ParseFRMRPoolKey(tc.in)
		if err != nil || got != tc.want || got.String() != tc.text {
			t.Errorf("ParseFRMRPoolKey(%q) = %+v (%s), %v; want %+v (%s)", tc.in, got, got, err, tc.want, tc.text)
		}
	}
	for in, want := range map[string]struct {
		err   error
		field int
	}{
		"":                        {ErrFRMRKeyFields, 0},
		"1:2:3":                   {ErrFRMRKeyFields, 3},
		"1::3:0":                  {ErrFRMRKeySyntax, 1},
		"1:2:3:0:1":               {ErrFRMRKeyExtra, 4},
		"1:2:100000000:0":         {ErrFRMRKeyRange, 2},
		"1:2:3:2":                 {ErrFRMRKeyRange, 3},
		"10000000000000000:0:0:0": {ErrFRMRKeyRange, 0},
		"g:0:0:0":                 {ErrFRMRKeySyntax, 0},
		"0x:0:0:0":                {ErrFRMRKeySyntax, 0},
		" 1:0:0:0":                {ErrFRMRKeySyntax, 0},
		"-1:0:0:0":                {ErrFRMRKeySyntax, 0},
		"1:2:3:0::":               {ErrFRMRKeySyntax, 4},
	} {
		_, err := ParseFRMRPoolKey(in)
		var ke *FRMRPoolKeyError
		if !errors.As(err, &ke) || !errors.Is(err, want.err) || !errors.Is(err, unix.EINVAL) || ke.Field != want.field || ke.Key != in {
			t.Errorf("ParseFRMRPoolKey(%q) = %v (%+v), want %v at field %d", in, err, ke, want.err, want.field)
		}
	}
}

func FuzzDecodeFRMRPools(f *testing.F) {
	req := netlink.Message{}
	k := FRMRPoolKey{VendorKey: 3, NumDMABlocks: 8, AccessFlags: 1, ATS: true}
	f.Add(frmrMsg(req, frmrEntry(k, 1, 2, 3, 4, nil)).Data)
	f.Add(frmrMsg(req).Data)
	for _, b := range fixtureSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := decodeFRMRPools(b)
		if err == nil && len(ps) > 0 && len(b) < 16 {
			t.Fatalf("%d pools from %d bytes", len(ps), len(b))
		}
		for _, p := range ps {
			if p.Key == nil && p.KernelVendorKey != nil {
				t.Fatalf("a kernel vendor key without a key: %+v", p)
			}
		}
	})
}

func FuzzParseFRMRPoolKey(f *testing.F) {
	for _, s := range []string{"0:1:0:0", "ff:0x10:7:1", "1:2:3:0:", "1:2:3", "", "1:2:3:0:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseFRMRPoolKey(s)
		if err != nil {
			if !errors.Is(err, unix.EINVAL) {
				t.Fatalf("%q: %v does not match EINVAL", s, err)
			}
			return
		}
		again, err := ParseFRMRPoolKey(k.String())
		if err != nil || again != k {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, k, k.String(), again, err)
		}
	})
}

func ExampleParseFRMRPoolKey() {
	k, err := ParseFRMRPoolKey("0x10:100:1f:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("vendor key %#x, %d DMA blocks, access %#x, ATS %v: %s\n", k.VendorKey, k.NumDMABlocks, k.AccessFlags, k.ATS, k)
	_, err = ParseFRMRPoolKey("1:2:3")
	fmt.Println(err)
	// Output:
	// vendor key 0x10, 256 DMA blocks, access 0x1f, ATS true: 10:100:1f:1
	// nldev: FRMR pool key "1:2:3" has 3 fields: expected 4 fields
}
