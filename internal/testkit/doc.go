// Package testkit holds the module's test scaffolding, apart from the
// plumbing in internal/ that the library runs on: testenv (what a test
// finds in the VM — the guest's devices, the oracles, the wire and siw
// environments — and the gate that tells test/vm which packages need it)
// and rxetest (rxe devices, addresses and leak checks for the VM tests).
// Only tests and test-support packages (such as cmd/internal/cmnode/cmtest)
// import them.
package testkit
