package devcache

import (
	"testing"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

func TestFollowsNetdev(t *testing.T) {
	eth := []ib.LinkLayer{ib.LinkLayerEthernet}
	for _, tc := range []struct {
		name   string
		driver ib.DriverID
		lls    []ib.LinkLayer
		want   bool
	}{
		{"rxe", ib.DriverRXE, eth, true},
		{"siw", ib.DriverSIW, eth, true},
		{"mlx5 RoCE", ib.DriverMLX5, eth, false},
		{"no driver id", ib.DriverUnknown, eth, false},
		{"rxe with an IB port", ib.DriverRXE, []ib.LinkLayer{ib.LinkLayerInfiniBand}, false},
	} {
		if got := FollowsNetdev(tc.driver, tc.lls); got != tc.want {
			t.Errorf("%s: FollowsNetdev = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSameDevices(t *testing.T) {
	dev := func(name string, idx uint32, node string) Device {
		d := Device{Verbs: uverbs.Device{Name: name, Index: idx, Uverbs: node}}
		d.Name, d.Index = name, idx
		return d
	}
	snap := &Snapshot{Devices: []Device{dev("rxe0", 1, "uverbs0"), dev("rxe1", 4, "uverbs1")}}
	noUverbs := &Snapshot{Devices: []Device{dev("rxe0", 1, "")}}
	for _, tc := range []struct {
		name string
		snap *Snapshot
		devs []nldev.Device
		want bool
	}{
		{"same", snap, []nldev.Device{{Name: "rxe0", Index: 1}, {Name: "rxe1", Index: 4}}, true},
		{"one gone", snap, []nldev.Device{{Name: "rxe0", Index: 1}}, false},
		{"one added", snap, []nldev.Device{{Name: "rxe0", Index: 1}, {Name: "rxe1", Index: 4}, {Name: "rxe2", Index: 5}}, false},
		{"renamed", snap, []nldev.Device{{Name: "rxe0", Index: 1}, {Name: "rxe9", Index: 4}}, false},
		{"back with a new index", snap, []nldev.Device{{Name: "rxe0", Index: 1}, {Name: "rxe1", Index: 6}}, false},
		{"without uverbs", noUverbs, []nldev.Device{{Name: "rxe0", Index: 1}}, false},
		{"none", &Snapshot{}, nil, true},
	} {
		if got := sameDevices(tc.snap, tc.devs); got != tc.want {
			t.Errorf("%s: sameDevices = %v, want %v", tc.name, got, tc.want)
		}
	}
}
