//go:build !unix

package wasmrt

import (
	"errors"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt/instrument"
)

// memoryImage is not used where mappings are not available: a
// pre-initialised module keeps its data segments (see image.go).
type memoryImage struct{}

func newMemoryImage(instrument.Image, uint64) (*memoryImage, error) { return nil, errNoImages }

func (*memoryImage) close() {}

func (*memoryImage) fill([]byte) {}

var errNoImages = errors.New("memory images need mappings")
