package main

import (
	"fmt"
	"slices"
	"strings"
)

// A siw guest has two Soft-iWARP devices and no rxe: siw0 on siwVeth0 in the
// root network namespace, siw1 on its veth peer in the namespace siwNetns.
// iWARP is TCP underneath: two siw devices of one namespace would talk
// through the device that owns the destination address, and rdma_cm needs
// a real address on a non-loopback netdev. Tests whose names contain SIW
// run there, and only there (wire tests aside, which run in pairs of
// their own, where siw0 sits alone on eth0: see splitWireSIW).

const (
	siwNet     = "10.78.0" // the veths' /24: siw0's side is .1, siw1's .2
	siwVeth0   = "vsiw0"
	siwVeth1   = "vsiw1"
	siwNetns   = "siwb" // ip netns's name: /run/netns/siwb
	siwDev     = "siw0"
	siwPeerDev = "siw1"
	// siwTestMark in a test's or benchmark's name makes it a siw test.
	siwTestMark = "SIW"
	// siwSuffix names the siw guests' runs; siwRaceSuffix those of the
	// race-built binaries.
	siwSuffix     = "siw"
	siwRaceSuffix = "siw-race"
)

// The environment of a siw guest's payload, read by internal/testkit/testenv.SIW;
// a wire guest has envWireSIWDev.
const (
	envSIWDev       = "RDMASTACK_SIW_DEV"        // siw0, in this namespace
	envSIWAddr      = "RDMASTACK_SIW_ADDR"       // its netdev's IPv4 address
	envSIWPeerDev   = "RDMASTACK_SIW_PEER_DEV"   // siw1, in the peer namespace
	envSIWPeerAddr  = "RDMASTACK_SIW_PEER_ADDR"  // its netdev's IPv4 address
	envSIWPeerNetns = "RDMASTACK_SIW_PEER_NETNS" // the peer namespace's path
	envWireSIWDev   = "RDMASTACK_WIRE_SIW_DEV"   // the siw device on eth0, alone there
)

// siwEnv is what a siw guest's payload exports besides payloadEnv's.
func siwEnv() string {
	var b strings.Builder
	for _, kv := range [][2]string{
		{envSIWDev, siwDev},
		{envSIWAddr, siwNet + ".1"},
		{envSIWPeerDev, siwPeerDev},
		{envSIWPeerAddr, siwNet + ".2"},
		{envSIWPeerNetns, "/run/netns/" + siwNetns},
	} {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], kv[1])
	}
	return b.String()
}

// isSIWSuffix reports whether a run's suffix makes its guest a siw guest.
func isSIWSuffix(suffix string) bool { return suffix == siwSuffix || suffix == siwRaceSuffix }

// isSIWTest reports whether a test or benchmark runs in the siw guests.
func isSIWTest(name string) bool { return strings.Contains(name, siwTestMark) }

// siwPayload is the test payload of a siw guest: the binaries with siw
// tests or benchmarks, each with only those.
func siwPayload(k kernel, devices int, outDir string, bins []testBinary, list testList, args []string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# test/vm siw payload\n")
	b.WriteString(payloadEnv(k, devices, outDir))
	b.WriteString(siwEnv())
	b.WriteString("status=0\n")
	for _, t := range bins {
		if tests, benches := list.siw[t.Name], list.siwBench[t.Name]; len(tests)+len(benches) > 0 {
			b.WriteString(testSteps([]testBinary{t}, onlyArgs(args, tests, benches)))
		}
	}
	b.WriteString("exit $status\n")
	return b.String()
}

// siwJobs are the siw guests' runs when the selection holds siw tests or
// benchmarks: one per kernel with bins, and one per race kernel with
// raceBins (race).
func (s *session) siwJobs(bins, raceBins []testBinary, raceKernels []kernel, list testList) (race, plain []vmJob) {
	if len(list.siwBinaries()) == 0 {
		return nil, nil
	}
	job := func(k kernel, suffix string, bins []testBinary) vmJob {
		return vmJob{kernel: k, devices: 2, suffix: suffix, payload: func(k kernel, n int, outDir string) string {
			return siwPayload(k, n, outDir, bins, list, s.opts.args)
		}}
	}
	if len(raceBins) > 0 {
		for _, k := range raceKernels {
			race = append(race, job(k, siwRaceSuffix, raceBins))
		}
	}
	for _, k := range s.kernels {
		plain = append(plain, job(k, siwSuffix, bins))
	}
	return race, plain
}

// wireSIW reports whether the selected wire tests or benchmarks include siw
// ones: only then do the wire guests get siw0 (instead of rxe0).
func (l testList) wireSIW() bool {
	for _, m := range []map[string][]string{l.wire, l.bench} {
		for _, names := range m {
			if slices.ContainsFunc(names, isSIWTest) {
				return true
			}
		}
	}
	return false
}

// splitWireSIW splits the wire tests and benchmarks of l into those without
// SIW in their names and those with, which run in pairs of their own whose
// guests have siw0 alone on eth0, no rxe0. rdma_cm binds an address of
// eth0 to the first device it finds there: next to rxe0, no connection
// would use siw0. And the plain pairs keep rxe0 alone: another device on
// the wire breaks wire tests that delete rxe0 and wait for it back as the
// first device (TestWireRsocketPeerDeviceDeleted, seen failing so), and
// an rxe0 added back after siw0 would let rdma_cm bind eth0's address to
// siw0, whose GID is eth0's MAC.
func (l testList) splitWireSIW() [2]testList {
	split := func(m map[string][]string) (plain, siw map[string][]string) {
		plain, siw = map[string][]string{}, map[string][]string{}
		for bin, names := range m {
			for _, n := range names {
				if isSIWTest(n) {
					siw[bin] = append(siw[bin], n)
				} else {
					plain[bin] = append(plain[bin], n)
				}
			}
		}
		return plain, siw
	}
	var plain, siw testList
	plain.wire, siw.wire = split(l.wire)
	plain.bench, siw.bench = split(l.bench)
	return [2]testList{plain, siw}
}
