package rxe

import (
	"errors"
	"strings"
	"testing"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs"
)

// TestNoProvider: a device of another driver is refused with the driver
// named.
func TestNoProvider(t *testing.T) {
	err := checkDriver(uverbs.Device{Name: "siw0", DriverID: ib.DriverSIW}, "cq")
	if !errors.Is(err, ErrNoProvider) || !errors.Is(err, uverbs.ErrNotSupported) || !strings.Contains(err.Error(), "siw0") ||
		!strings.Contains(err.Error(), ib.DriverSIW.String()) {
		t.Fatalf("siw device: %v", err)
	}
	if err := checkDriver(uverbs.Device{Name: "rxe0", DriverID: ib.DriverRXE}, "cq"); err != nil {
		t.Fatalf("rxe device: %v", err)
	}
}
