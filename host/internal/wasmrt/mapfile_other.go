//go:build !unix

package wasmrt

import "os"

// mapFile reads the file at path where mappings are not available; the
// returned function does nothing.
func mapFile(path string) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	return b, func() {}, err
}

// dropResident does nothing where files are read instead of mapped.
func dropResident([]byte) {}
