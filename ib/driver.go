package ib

import "fmt"

// DriverID identifies the kernel driver behind a uverbs device (enum
// rdma_driver_id in ib_user_ioctl_verbs.h). RDMA netlink reports it with
// the uverbs char device, and every uverbs ioctl carries it.
type DriverID uint32

// Driver ids.
const (
	DriverUnknown   DriverID = 0  // RDMA_DRIVER_UNKNOWN
	DriverMLX5      DriverID = 1  // RDMA_DRIVER_MLX5
	DriverMLX4      DriverID = 2  // RDMA_DRIVER_MLX4
	DriverCXGB3     DriverID = 3  // RDMA_DRIVER_CXGB3
	DriverCXGB4     DriverID = 4  // RDMA_DRIVER_CXGB4
	DriverMTHCA     DriverID = 5  // RDMA_DRIVER_MTHCA
	DriverBNXTRE    DriverID = 6  // RDMA_DRIVER_BNXT_RE
	DriverOCRDMA    DriverID = 7  // RDMA_DRIVER_OCRDMA
	DriverNES       DriverID = 8  // RDMA_DRIVER_NES
	DriverIRDMA     DriverID = 9  // RDMA_DRIVER_I40IW, RDMA_DRIVER_IRDMA
	DriverVMWPVRDMA DriverID = 10 // RDMA_DRIVER_VMW_PVRDMA
	DriverQEDR      DriverID = 11 // RDMA_DRIVER_QEDR
	DriverHNS       DriverID = 12 // RDMA_DRIVER_HNS
	DriverUSNIC     DriverID = 13 // RDMA_DRIVER_USNIC
	DriverRXE       DriverID = 14 // RDMA_DRIVER_RXE
	DriverHFI1      DriverID = 15 // RDMA_DRIVER_HFI1
	DriverQIB       DriverID = 16 // RDMA_DRIVER_QIB
	DriverEFA       DriverID = 17 // RDMA_DRIVER_EFA
	DriverSIW       DriverID = 18 // RDMA_DRIVER_SIW
	DriverERDMA     DriverID = 19 // RDMA_DRIVER_ERDMA
	DriverMANA      DriverID = 20 // RDMA_DRIVER_MANA (6.2)
)

var driverNames = [...]string{"unknown", "mlx5", "mlx4", "cxgb3", "cxgb4", "mthca", "bnxt_re",
	"ocrdma", "nes", "irdma", "vmw_pvrdma", "qedr", "hns", "usnic", "rxe", "hfi1", "qib", "efa",
	"siw", "erdma", "mana"}

// String returns the driver's kernel module name ("rxe", "mlx5").
func (d DriverID) String() string {
	if int(d) < len(driverNames) {
		return driverNames[d]
	}
	return fmt.Sprintf("driver(%d)", uint32(d))
}
