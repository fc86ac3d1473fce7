package wasmrt

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tetratelabs/wazero/api"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt/instrument"
)

// start is what a loaded module's instances start with besides the code
// they share (instrument.Split): the initial memory, which each instance
// maps (memoryImage), and, for a pre-initialised module, the memory's size
// and the mutable globals' values, which the host sets before the guest
// runs. The code of every Python module built from one runtime is then
// the same, compiled once in a host however many such modules it serves;
// only the images differ. The zero start (no image) is a module compiled
// as it is.
type start struct {
	image   *memoryImage
	pages   uint32
	globals map[string]uint64 // by export name: raw bits
}

// split returns the code to compile for wasm and what its instances start
// with. A module Split cannot take apart, or whose image cannot be made,
// is compiled as it is.
func (r *Runtime) split(wasm []byte) ([]byte, start) {
	code, st, ok, err := instrument.Split(wasm)
	if err != nil || !ok {
		return wasm, start{}
	}
	image, err := newMemoryImage(st.Image, uint64(r.opts.MemoryLimitPages)*wasmPage)
	if err != nil {
		if err != errNoImages {
			r.opts.Logger.Warn("the module's initial memory is written into each instance instead: " + err.Error())
		}
		return wasm, start{}
	}
	s := start{image: image, pages: st.Pages}
	if st.Globals != nil {
		s.globals = make(map[string]uint64, len(st.Globals))
		for idx, v := range st.Globals {
			s.globals[instrument.ExportedGlobalPrefix+strconv.FormatUint(uint64(idx), 10)] = v
		}
	}
	return code, s
}

// apply gives a new instance's module its start: the memory grown to its
// initial size, the globals set. The image is already its memory's
// (withMemoryAllocator).
func (s start) apply(mod api.Module) error {
	if mem := mod.Memory(); mem != nil {
		if have := mem.Size() / wasmPage; have < s.pages {
			if _, ok := mem.Grow(s.pages - have); !ok {
				return fmt.Errorf("its initial memory of %d pages is above the memory limit", s.pages)
			}
		}
	}
	for name, v := range s.globals {
		g, ok := mod.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return fmt.Errorf("the split module lacks its global %s", name)
		}
		g.Set(v)
	}
	return nil
}

// errNoImages is newMemoryImage's error where images cannot be mapped.
var errNoImages = errors.New("memory images need mappings")

// close releases the image.
func (s start) close() { s.image.close() }
