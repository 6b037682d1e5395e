#!/bin/sh
# mkfix.sh rewrites the fixture trees multi, missing and nopkeys here:
# sysfs as libibumad and ibstatus read it, for what rdma_rxe cannot show.
#   multi: an InfiniBand CA with an Active FDR10 port (LID, SM LID) and a
#     Down 2.5 Gb/s port (mlx4_0), an mlx5 RoCE port (mlx5_0), an iWARP
#     device (siw0), a CA without hca_type, hw_rev and link_layer and with
#     a fw_ver longer than libibumad keeps (opt0), a switch (sw0, port 0).
#   missing: mlx5_0, and mlx5_1 whose port lacks the required cap_mask.
#   nopkeys: rxe0, whose port has no pkeys directory.
set -eu
cd "$(dirname "$0")"
rm -rf multi missing nopkeys
f() { mkdir -p "$(dirname "$1")" && printf '%s\n' "$2" >"$1"; }
# port DIR LID SM_LID STATE PHYS_STATE RATE CAP_MASK LINK_LAYER GID
port() {
	f "$1/lid" "$2"; f "$1/sm_lid" "$3"; f "$1/sm_sl" 0; f "$1/lid_mask_count" 0
	f "$1/state" "$4"; f "$1/phys_state" "$5"; f "$1/rate" "$6"; f "$1/cap_mask" "$7"
	if [ -n "$8" ]; then f "$1/link_layer" "$8"; fi
	f "$1/gids/0" "$9"; f "$1/pkeys/0" 0xffff; f "$1/pkeys/1" 0x0000
}
# ca DIR NODE_TYPE FW_VER HW_REV HCA_TYPE NODE_GUID SYS_IMAGE_GUID
ca() {
	f "$1/node_type" "$2"
	if [ -n "$3" ]; then f "$1/fw_ver" "$3"; fi
	if [ -n "$4" ]; then f "$1/hw_rev" "$4"; fi
	if [ -n "$5" ]; then f "$1/hca_type" "$5"; fi
	f "$1/node_guid" "$6"; f "$1/sys_image_guid" "$7"
}
M=multi
ca $M/mlx4_0 "1: CA" 2.42.5000 0x1 MT4099 0002:c903:0010:fa20 0002:c903:0010:fa23
port $M/mlx4_0/ports/1 0x1a 0x1 "4: ACTIVE" "5: LinkUp" "40 Gb/sec (4X FDR10)" 0x02514868 InfiniBand fe80:0000:0000:0000:0002:c903:0010:fa21
port $M/mlx4_0/ports/2 0x0 0x0 "1: DOWN" "2: Polling" "2.5 Gb/sec (1X SDR)" 0x02514868 InfiniBand fe80:0000:0000:0000:0002:c903:0010:fa22
ca $M/mlx5_0 "1: CA" 16.35.2000 0x0 MT4119 b859:9f03:00d4:3f2a b859:9f03:00d4:3f2a
port $M/mlx5_0/ports/1 0x0 0x0 "4: ACTIVE" "5: LinkUp" "100 Gb/sec (4X EDR)" 0x00010000 Ethernet fe80:0000:0000:0000:ba59:9fff:fed4:3f2a
ca $M/siw0 "4: RNIC" 0.0.0 "" "" 5254:0012:3456:0000 5254:0012:3456:0000
port $M/siw0/ports/1 0 0 "4: ACTIVE" "5: LinkUp" "10 Gb/sec (4X SDR)" 0x00000000 Ethernet 5254:0012:3456:0000:0000:0000:0000:0000
ca $M/opt0 "1: CA" "20.31.1014 (MT_0000000224)" "" "" 0x0002:0xc903:0:1 0002:c903:0000:0001
port $M/opt0/ports/1 0x5 0x1 "3: ARMED" "5: LinkUp" "56 Gb/sec (4X FDR)" 0x0251086a "" fe80:0000:0000:0000:0002:c903:0000:0002
ca $M/sw0 "2: switch" 9.9.9 0xa0 MT51000 7cfe:9003:0012:3400 7cfe:9003:0012:3400
port $M/sw0/ports/0 0x3 0x3 "4: ACTIVE" "5: LinkUp" "100 Gb/sec (4X EDR)" 0x42500848 InfiniBand fe80:0000:0000:0000:7cfe:9003:0012:3400
X=missing
ca $X/mlx5_0 "1: CA" 16.35.2000 0x0 MT4119 b859:9f03:00d4:3f2a b859:9f03:00d4:3f2a
port $X/mlx5_0/ports/1 0x0 0x0 "4: ACTIVE" "5: LinkUp" "100 Gb/sec (4X EDR)" 0x00010000 Ethernet fe80:0000:0000:0000:ba59:9fff:fed4:3f2a
ca $X/mlx5_1 "1: CA" 16.35.2000 0x0 MT4119 b859:9f03:00d4:3f2b b859:9f03:00d4:3f2a
port $X/mlx5_1/ports/1 0x0 0x0 "1: DOWN" "3: Disabled" "25 Gb/sec (1X EDR)" 0x00010000 Ethernet fe80:0000:0000:0000:ba59:9fff:fed4:3f2b
rm $X/mlx5_1/ports/1/cap_mask
P=nopkeys
ca $P/rxe0 "1: CA" 0.0.0 "" "" 5054:00ff:fe12:3456 5054:00ff:fe12:3456
port $P/rxe0/ports/1 0 0 "4: ACTIVE" "5: LinkUp" "100 Gb/sec (4X EDR)" 0x00010000 Ethernet fe80:0000:0000:0000:5054:00ff:fe12:3456
rm -r $P/rxe0/ports/1/pkeys
