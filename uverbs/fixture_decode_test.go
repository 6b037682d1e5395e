package uverbs

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// fixture reads testdata/<kernel>/<name>, hex bytes captured from rxe0 in
// the VM by TestIntegrationUverbsCaptureFixtures.
func fixture(t testing.TB, kernel, name string) []byte {
	t.Helper()
	s, err := os.ReadFile(filepath.Join("testdata", kernel, name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(s)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fixtureKernels(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, e := range ents {
		if e.IsDir() {
			ks = append(ks, e.Name())
		}
	}
	if len(ks) < 2 {
		t.Fatalf("fixtures for %d kernels, want 6.1 and 6.12", len(ks))
	}
	return ks
}

// TestFixtureDecode decodes what the real kernels answered for an rxe
// device.
func TestFixtureDecode(t *testing.T) {
	for _, k := range fixtureKernels(t) {
		r := kabi.Decode[abi.ExQueryDeviceResp](fixture(t, k, "query_device_ex.hex"))
		a := decodeDeviceAttr(&r)
		// rxe: vendor id 0xFFFFFF, one port, the extended response filled
		// to its end, RC_RNR_NAK_GEN among the capabilities.
		if a.VendorID != 0xffffff || a.PhysPortCount != 1 || a.Extended != 304 || a.Caps&DeviceRCRNRNAKGen == 0 || a.NodeGUID.IsZero() {
			t.Errorf("%s: device %+v", k, a)
		}
		if a.Caps != DeviceCaps(uint32(a.CapsEx)) {
			t.Errorf("%s: device_cap_flags %v is not the low half of device_cap_flags_ex %v", k, a.Caps, a.CapsEx)
		}
		pr := kabi.Decode[abi.QueryPortRespEx](fixture(t, k, "query_port_ex.hex"))
		p := decodePortAttr(&pr)
		if p.State != ib.PortActive || p.LinkLayer != ib.LinkLayerEthernet || p.MaxMTU != ib.MTU4096 || p.GIDTableLen == 0 || p.PhysState != ib.PhysLinkUp {
			t.Errorf("%s: port %+v", k, p)
		}
		gids := decodeGIDEntries(fixture(t, k, "gid_table.hex"))
		// rxe speaks RoCE v2 only: the veth's link-local address and its
		// IPv4 address (10.77.0.1, mapped), both v2.
		var ll, v4 bool
		for _, g := range gids {
			if g.Port != 1 || g.NetdevIndex == 0 || g.Type != ib.GIDTypeRoCEv2 {
				t.Errorf("%s: gid entry %+v", k, g)
			}
			ll = ll || g.GID.Addr().IsLinkLocalUnicast()
			v4 = v4 || g.GID.String() == "::ffff:10.77.0.1"
		}
		if len(gids) != 2 || !ll || !v4 {
			t.Errorf("%s: gids %+v", k, gids)
		}
	}
}

func addFixtureSeeds(f *testing.F, name string) {
	for _, k := range fixtureKernels(f) {
		f.Add(fixture(f, k, name))
	}
}
