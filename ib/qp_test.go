package ib

import "testing"

// The names are iproute2's (rdma/res.c, res-qp.c, res-srq.c), which
// rdmastack's rdma prints.
func TestQPEnumNames(t *testing.T) {
	for _, tc := range [][2]string{
		{QPTypeSMI.String(), "SMI"}, {QPTypeRC.String(), "RC"}, {QPTypeRawEthertype.String(), "RAW_ETHERTYPE"},
		{QPType(7).String(), "UNKNOWN"}, {QPTypeRawPacket.String(), "RAW_PACKET"}, {QPTypeXRCTgt.String(), "XRC_TGT"},
		{QPType(11).String(), "UNKNOWN"}, {QPTypeDriver.String(), "DRIVER"},
		{QPStateReset.String(), "RESET"}, {QPStateErr.String(), "ERR"}, {QPState(7).String(), "UNKNOWN"},
		{MigArmed.String(), "ARMED"}, {PathMigState(3).String(), "UNKNOWN"},
		{SRQTypeTM.String(), "TM"}, {SRQType(3).String(), "UNKNOWN"},
		{QPTypeUD.GoString(), "ib.QPType(4)"},
	} {
		if got, want := tc[0], tc[1]; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
