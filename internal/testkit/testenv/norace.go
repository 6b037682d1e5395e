//go:build !race

package testenv

// Race reports whether the test binary was built with the race detector,
// which slows collections and scheduling several times over.
const Race = false
