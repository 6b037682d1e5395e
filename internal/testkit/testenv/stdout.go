package testenv

import (
	"io"
	"os"
	"testing"
)

// Stdout runs fn with os.Stdout redirected to a pipe and returns what fn
// printed: how an integration test runs an Example function whose output
// depends on the machine (so it has no Output comment) and checks it.
// os.Stdout is restored when fn returns or panics.
func Stdout(t testing.TB, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	read := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(r) // until w is closed
		read <- b
	}()
	func() {
		saved := os.Stdout
		os.Stdout = w
		defer func() {
			os.Stdout = saved
			w.Close()
		}()
		fn()
	}()
	return string(<-read)
}
