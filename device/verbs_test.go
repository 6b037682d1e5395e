package device

import (
	"testing"

	"github.com/rdmastack/rdmastack/nldev"
	"github.com/rdmastack/rdmastack/uverbs"
)

func TestSameDevices(t *testing.T) {
	snap := &Snapshot{Devices: []Device{
		{Device: uverbs.Device{Name: "rxe0", Index: 1, Uverbs: "uverbs0"}},
		{Device: uverbs.Device{Name: "rxe1", Index: 4, Uverbs: "uverbs1"}},
	}}
	noUverbs := &Snapshot{Devices: []Device{{Device: uverbs.Device{Name: "rxe0", Index: 1}}}}
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
