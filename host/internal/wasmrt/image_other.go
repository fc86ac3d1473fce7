//go:build !unix

package wasmrt

import "github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt/instrument"

// memoryImage is not used where mappings are not available: a
// module keeps its data segments (see image.go and start.go).
type memoryImage struct{}

func newMemoryImage(instrument.Image, uint64) (*memoryImage, error) { return nil, errNoImages }

func (*memoryImage) close() {}

func (*memoryImage) fill([]byte) {}
