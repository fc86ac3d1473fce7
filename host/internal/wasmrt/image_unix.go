//go:build unix && !linux

package wasmrt

import "os"

// imageFile makes the file of a memory image: an unlinked temporary file,
// which the open descriptor keeps until the image is closed.
func imageFile() (*os.File, error) {
	f, err := os.CreateTemp("", "kopf-wasm-memory-*")
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name())
	return f, nil
}
