package kopf

import (
	"os"
	"path/filepath"
	"testing"
)

// The request of a parent with sub-handlers (abi/testdata) decodes as
// encoding/json decodes it, their progress included.
func TestDecodeSubhandlersRequest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "abi", "testdata", "request-subhandlers.json"))
	if err != nil {
		t.Fatal(err)
	}
	sameAsStdlib(t, b)
	req, err := decodeRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Subhandlers) != 2 || !req.Subhandlers[0].Finished || !req.Subhandlers[1].Sleeping || req.Subhandlers[1].Retry != 1 {
		t.Errorf("subhandlers = %+v", req.Subhandlers)
	}
}
