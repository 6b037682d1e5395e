package uverbs

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rdmastack/rdmastack/ib"
)

// TestNoProvider: creating a CQ, QP or SRQ on a device whose driver has
// no data-path provider is refused before anything is sent, with the
// driver named; rxe and siw have one.
func TestNoProvider(t *testing.T) {
	ctx := func(name string, d ib.DriverID) *Context {
		return &Context{dev: Device{Name: name, DriverID: d}, k: fdKernel{fd: -1}, prov: providerFor(d)}
	}
	c := ctx("efa0", ib.DriverEFA)
	for _, what := range []string{"CQ", "QP", "SRQ"} {
		_, err := c.dataPath("create", what)
		if !errors.Is(err, ErrNoProvider) || !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "efa0") ||
			!strings.Contains(err.Error(), ib.DriverEFA.String()) || !strings.Contains(err.Error(), what) {
			t.Fatalf("%s on efa: %v", what, err)
		}
	}
	for _, d := range []ib.DriverID{ib.DriverRXE, ib.DriverSIW} {
		if ok, err := ctx("x0", d).dataPath("create", "CQ"); !ok || err != nil {
			t.Fatalf("%v device: %v, %v", d, ok, err)
		}
	}
	c = ctx("mlx5_0", ib.DriverMLX5)
	if _, err := c.dataPath("create", "CQ"); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "mlx5") {
		t.Fatalf("mlx5 device: %v", err)
	}
}

// TestPostWithoutDataPath: the objects of a context without a char
// device (a fake kernel's) have no data path, and say so.
func TestPostWithoutDataPath(t *testing.T) {
	c := &Context{dev: Device{Name: "rxe0", DriverID: ib.DriverRXE}, prov: rxeProvider{}}
	qp := &QP{object: object{ctx: c, kind: "qp", id: 5}}
	cq := &CQ{object: object{ctx: c, kind: "cq", id: 3}}
	srq := &SRQ{object: object{ctx: c, kind: "srq", id: 2}}
	for name, err := range map[string]error{
		"post send":  qp.PostSend(&SendWR{}),
		"post list":  qp.PostSendList([]SendWR{{}}),
		"post recv":  qp.PostRecv(&RecvWR{}),
		"srq recv":   srq.PostRecv(&RecvWR{}),
		"req notify": cq.RequestNotify(false),
		"poll":       func() error { _, err := cq.Poll(make([]WC, 1)); return err }(),
	} {
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrNotSupported) || e.Dev != "rxe0" {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := qp.PostSend(&SendWR{}); !strings.Contains(err.Error(), "post send qp 5") {
		t.Errorf("error does not name the operation and QP: %v", err)
	}
	_ = unix.EINVAL
}
