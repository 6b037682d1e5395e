package uverbs

import (
	"slices"
	"testing"
)

func TestCapNames(t *testing.T) {
	c := DeviceResizeMaxWR | DeviceRCRNRNAKGen | 1<<16 | DeviceRawScatterFCS | 1<<63
	if got, want := c.Names(), []string{"RESIZE_MAX_WR", "RC_RNR_NAK_GEN", "RAW_SCATTER_FCS"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	if got := c.Unknown(); got != 1<<16|1<<63 {
		t.Errorf("Unknown = %#x", uint64(got))
	}
	if got, want := c.String(), "RESIZE_MAX_WR|RC_RNR_NAK_GEN|RAW_SCATTER_FCS|0x8000000000010000"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if DeviceCaps(0).String() != "0" || DeviceCaps(0).Names() != nil || DeviceCaps(0).Unknown() != 0 {
		t.Errorf("zero: %q %q", DeviceCaps(0).String(), DeviceCaps(0).Names())
	}
	// Every bit the tables name is named once, and in bit order.
	for _, tab := range [][]flag{deviceCapNames, odpGeneralNames, odpTransportNames, rawPacketNames} {
		for i, f := range tab {
			if f.bit&(f.bit-1) != 0 || f.name == "" || i > 0 && f.bit <= tab[i-1].bit {
				t.Errorf("table entry %d (%#x %q) is not one bit above the last", i, f.bit, f.name)
			}
		}
	}
	if got := (ODPSupportImplicit | 4).Names(); !slices.Equal(got, []string{"ODP_SUPPORT_IMPLICIT"}) || (ODPSupportImplicit|4).Unknown() != 4 {
		t.Errorf("ODP general: %q", got)
	}
	if got := (ODPSupportSRQRecv | ODPSupportSend).Names(); !slices.Equal(got, []string{"SUPPORT_SEND", "SUPPORT_SRQ"}) {
		t.Errorf("ODP transport: %q", got)
	}
	if got := (RawPacketDelayDrop | 16).String(); got != "DELAY_DROP|0x10" || (RawPacketDelayDrop|16).Unknown() != 16 {
		t.Errorf("raw packet: %q", got)
	}
}
