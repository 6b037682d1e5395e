package uverbs

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmastack/rdmastack/internal/kabi"
	"github.com/rdmastack/rdmastack/internal/testkit/testenv"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// TestIntegrationUverbsCaptureFixtures saves the kernel's raw responses
// (extended QUERY_DEVICE, QUERY_PORT over ioctl, QUERY_GID_TABLE) as hex
// under testenv.OutDir()/uverbs/<kernel>/, for uverbs/testdata/ and the
// decoders' unit and fuzz tests.
func TestIntegrationUverbsCaptureFixtures(t *testing.T) {
	d := devicesForTest(t)[0]
	c := openForTest(t, d, InterfaceAuto)
	var dev abi.ExQueryDeviceResp
	var req abi.ExQueryDevice
	if err := c.write("query device", abi.CmdExQueryDevice.Build(&req, &dev, nil, nil)); err != nil {
		t.Fatal(err)
	}
	var port abi.QueryPortRespEx
	call := abi.NewIoctl(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_QUERY_PORT)
	call.Const(abi.UVERBS_ATTR_QUERY_PORT_PORT_NUM, 1)
	call.Out(abi.UVERBS_ATTR_QUERY_PORT_RESP, kabi.Bytes(&port))
	if err := c.ioctl("query port", call); err != nil {
		t.Fatal(err)
	}
	gids := make([]abi.GidEntry, 64)
	var n uint64
	call = abi.NewIoctl(abi.UVERBS_OBJECT_DEVICE, abi.UVERBS_METHOD_QUERY_GID_TABLE)
	call.Const(abi.UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, gidEntrySize)
	call.Out(abi.UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, entriesBytes(gids))
	call.Out(abi.UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, kabi.Bytes(&n))
	if err := c.ioctl("query gid table", call); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n > 64 {
		t.Fatalf("%d gid entries", n)
	}
	out := testenv.OutDir()
	if out == "" {
		t.Log("no output directory: fixtures not written")
		return
	}
	dir := filepath.Join(out, "uverbs", testenv.KernelRelease())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"query_device_ex.hex": kabi.Bytes(&dev),
		"query_port_ex.hex":   kabi.Bytes(&port),
		"gid_table.hex":       entriesBytes(gids[:n]),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(hex.EncodeToString(b)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
