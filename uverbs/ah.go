package uverbs

import (
	"fmt"
	"net"

	"github.com/rdmastack/rdmastack/ib"
	"github.com/rdmastack/rdmastack/uverbs/internal/abi"
)

// AHAttr is an address vector: where a UD send or a connected QP's path
// goes (struct ib_uverbs_ah_attr; struct ib_uverbs_qp_dest for QPs).
type AHAttr struct {
	// GRH: DGID, FlowLabel, SGIDIndex, HopLimit and TrafficClass are used
	// when IsGlobal is set. RoCE needs a GRH.
	IsGlobal     bool
	DGID         ib.GID
	FlowLabel    uint32
	SGIDIndex    uint8
	HopLimit     uint8
	TrafficClass uint8

	DLID        uint16
	SL          uint8
	SrcPathBits uint8
	StaticRate  uint8
	Port        uint8
}

func (a *AHAttr) abi() abi.AhAttr {
	return abi.AhAttr{
		Grh:  abi.GlobalRoute{Dgid: a.DGID, FlowLabel: a.FlowLabel, SgidIndex: a.SGIDIndex, HopLimit: a.HopLimit, TrafficClass: a.TrafficClass},
		Dlid: a.DLID, Sl: a.SL, SrcPathBits: a.SrcPathBits, StaticRate: a.StaticRate, IsGlobal: b2u(a.IsGlobal), PortNum: a.Port,
	}
}

func (a *AHAttr) dest() abi.QpDest {
	return abi.QpDest{Dgid: a.DGID, FlowLabel: a.FlowLabel, Dlid: a.DLID, SgidIndex: a.SGIDIndex, HopLimit: a.HopLimit,
		TrafficClass: a.TrafficClass, Sl: a.SL, SrcPathBits: a.SrcPathBits, StaticRate: a.StaticRate,
		IsGlobal: b2u(a.IsGlobal), PortNum: a.Port}
}

func ahFromDest(d abi.QpDest) AHAttr {
	return AHAttr{IsGlobal: d.IsGlobal != 0, DGID: d.Dgid, FlowLabel: d.FlowLabel, SGIDIndex: d.SgidIndex,
		HopLimit: d.HopLimit, TrafficClass: d.TrafficClass, DLID: d.Dlid, SL: d.Sl, SrcPathBits: d.SrcPathBits,
		StaticRate: d.StaticRate, Port: d.PortNum}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// AH is an address handle.
type AH struct {
	object
	driver []byte // the driver's response to CREATE_AH (rxe's ah_num: rxe_qp.go)
	mac    net.HardwareAddr
}

// MAC is the destination MAC address the kernel resolved for a RoCE AH,
// for drivers that report it (mlx5's struct mlx5_ib_create_ah_resp); nil
// for the others.
func (ah *AH) MAC() net.HardwareAddr { return ah.mac }

// CreateAH creates an address handle in pd. On RoCE the kernel resolves
// the destination MAC from the DGID (a neighbour lookup through the SGID's
// netdev), so an unreachable DGID fails here.
func (pd *PD) CreateAH(attr AHAttr) (*AH, error) {
	c := pd.ctx
	const op = "create ah"
	if c.prov.traits().iwarp {
		return nil, c.unsupported(op, "an address handle")
	}
	if attr.Port == 0 {
		return nil, invalid(c.dev.Name, op, "ports are numbered from 1")
	}
	done, err := pd.use(op)
	if err != nil {
		return nil, err
	}
	defer done()
	req := abi.CreateAh{PdHandle: pd.handle, Attr: attr.abi()}
	var resp abi.CreateAhResp
	drv := make([]byte, c.prov.udata().createAHOut)
	if err := c.write(op, abi.CmdCreateAh.Build(&req, &resp, nil, drv)); err != nil {
		return nil, err
	}
	ah := &AH{object: object{ctx: c, handle: resp.AhHandle, kind: "ah"}, driver: drv, mac: c.prov.ahMAC(drv)}
	return ah, nil
}

// Close destroys the address handle. Safe to call more than once, and
// concurrently.
func (ah *AH) Close() error {
	return ah.destroy(func() error {
		req := abi.DestroyAh{AhHandle: ah.handle}
		return ah.ctx.write(fmt.Sprintf("destroy ah %d", ah.handle), abi.CmdDestroyAh.Build(&req, nil))
	})
}
