//go:build !unix

package wasmrt

import "context"

// withMemoryAllocator leaves wazero's default memory allocation in place
// where anonymous mappings are not available.
func withMemoryAllocator(ctx context.Context, _ *memoryImage) context.Context { return ctx }
