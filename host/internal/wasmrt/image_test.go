//go:build unix

package wasmrt

import (
	"bytes"
	"context"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt/instrument"
)

// peekPoke is a module with one page of memory and two exports: get(addr)
// returns the byte at addr, set(addr, v) writes it.
var peekPoke = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x01, 0x0b, 0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x00, // types
	0x03, 0x03, 0x02, 0x00, 0x01, // functions
	0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1
	0x07, 0x13, 0x03, 0x03, 'g', 'e', 't', 0x00, 0x00, 0x03, 's', 'e', 't', 0x00, 0x01,
	0x03, 'm', 'e', 'm', 0x02, 0x00, // exports
	0x0a, 0x13, 0x02,
	0x07, 0x00, 0x20, 0x00, 0x2d, 0x00, 0x00, 0x0b, // get: local.get 0; i32.load8_u; end
	0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x3a, 0x00, 0x00, 0x0b, // set: local.get 0; local.get 1; i32.store8; end
}

// TestMemoryImage: the instances of a pre-initialised module start with
// its snapshot's memory, mapped from one image rather than written from
// data segments, and what one instance writes the others do not see.
func TestMemoryImage(t *testing.T) {
	ctx := context.Background()
	mem := make([]byte, wasmPage)
	mem[10], mem[wasmPage-1] = 7, 8
	snap, err := instrument.Snapshot(peekPoke, instrument.State{Memory: mem})
	if err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, Options{})
	code, st := r.split(snap)
	defer st.close()
	c, err := r.acquire(ctx, Digest(code), code)
	if err != nil {
		t.Fatal(err)
	}
	defer r.release(c)
	if st.image == nil {
		t.Fatal("the snapshot's memory was not made an image")
	}
	a, err := newInstance(ctx, r, c, st)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	b, err := newInstance(ctx, r, c, st)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	get := func(inst *instance, addr uint32) uint32 {
		res, err := inst.mod.ExportedFunction("get").Call(ctx, api.EncodeU32(addr))
		if err != nil {
			t.Fatal(err)
		}
		return api.DecodeU32(res[0])
	}
	if got := []uint32{get(a, 10), get(a, wasmPage-1), get(b, 10), get(a, 11)}; got[0] != 7 || got[1] != 8 || got[2] != 7 || got[3] != 0 {
		t.Fatalf("the instances start with %v, want [7 8 7 0]", got)
	}
	if _, err := a.mod.ExportedFunction("set").Call(ctx, 10, 9); err != nil {
		t.Fatal(err)
	}
	if got := []uint32{get(a, 10), get(b, 10)}; got[0] != 9 || got[1] != 7 {
		t.Errorf("after a wrote 9: a reads %d, b %d; want 9 and 7 (copy-on-write)", got[0], got[1])
	}
	if size := a.mod.Memory().Size(); size != wasmPage {
		t.Errorf("memory of %d bytes, want the snapshot's page", size)
	}
}

// TestSnapshotsShareCode: two pre-initialised modules of one code (two
// Python modules built from one runtime, say) are compiled once, and each
// instance starts with its own module's memory and size.
func TestSnapshotsShareCode(t *testing.T) {
	ctx := context.Background()
	one, two := make([]byte, wasmPage), make([]byte, 2*wasmPage)
	one[10], two[10], two[wasmPage+5] = 1, 2, 3
	snapOne, err := instrument.Snapshot(peekPoke, instrument.State{Memory: one})
	if err != nil {
		t.Fatal(err)
	}
	snapTwo, err := instrument.Snapshot(peekPoke, instrument.State{Memory: two})
	if err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, Options{})
	codeOne, stOne := r.split(snapOne)
	defer stOne.close()
	codeTwo, stTwo := r.split(snapTwo)
	defer stTwo.close()
	if Digest(codeOne) != Digest(codeTwo) {
		t.Fatal("two snapshots of one module split into different code")
	}
	for _, tt := range []struct {
		code      []byte
		st        start
		addr, val uint32
		size      uint32
	}{
		{codeOne, stOne, 10, 1, wasmPage},
		{codeTwo, stTwo, wasmPage + 5, 3, 2 * wasmPage},
	} {
		c, err := r.acquire(ctx, Digest(tt.code), tt.code)
		if err != nil {
			t.Fatal(err)
		}
		defer r.release(c)
		inst, err := newInstance(ctx, r, c, tt.st)
		if err != nil {
			t.Fatal(err)
		}
		defer inst.close()
		res, err := inst.mod.ExportedFunction("get").Call(ctx, api.EncodeU32(tt.addr))
		if err != nil {
			t.Fatal(err)
		}
		if got, size := api.DecodeU32(res[0]), inst.mod.Memory().Size(); got != tt.val || size != tt.size {
			t.Errorf("an instance reads %d at %d with %d bytes of memory; want %d with %d", got, tt.addr, size, tt.val, tt.size)
		}
	}
	if n := r.compiles.Load(); n != 1 {
		t.Errorf("the two modules were compiled %d times, want once", n)
	}
}

// TestWriteSegments: the image file holds what the segments write in
// order, however they are coalesced: close ones, far ones, overlapping
// ones, ones out of order and large ones.
func TestWriteSegments(t *testing.T) {
	seg := func(off int, fill byte, n int) instrument.Segment {
		return instrument.Segment{Offset: uint32(off), Data: bytes.Repeat([]byte{fill}, n)}
	}
	tests := []struct {
		name string
		segs []instrument.Segment
	}{
		{"close", []instrument.Segment{seg(0, 1, 10), seg(20, 2, 10), seg(4000, 3, 5)}},
		{"far", []instrument.Segment{seg(0, 1, 10), seg(100000, 2, 10)}},
		{"overlapping", []instrument.Segment{seg(0, 1, 100), seg(50, 2, 100), seg(120, 3, 10)}},
		{"out of order over a gap", []instrument.Segment{seg(1000, 1, 100), seg(0, 2, 50), seg(1200, 3, 100)}},
		{"large", []instrument.Segment{seg(0, 1, 10), seg(100, 2, maxRun+5), seg(maxRun+200, 3, 10)}},
		{"runs past the cap", []instrument.Segment{seg(0, 1, maxRun-10), seg(maxRun, 2, 100), seg(maxRun+120, 3, 7)}},
	}
	for _, tt := range tests {
		var size uint64
		for _, s := range tt.segs {
			size = max(size, uint64(s.Offset)+uint64(len(s.Data)))
		}
		want := instrument.Image{Size: size, Segments: tt.segs}.Bytes()
		got := &sparseFile{b: make([]byte, size)}
		if err := writeSegments(got, tt.segs); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.b, want) {
			t.Errorf("%s: the file is not what the segments write in order", tt.name)
		}
		if tt.name == "close" && got.writes != 1 {
			t.Errorf("close segments took %d writes, want 1", got.writes)
		}
	}
}

// sparseFile is an io.WriterAt over a byte slice, counting its writes.
type sparseFile struct {
	b      []byte
	writes int
}

func (f *sparseFile) WriteAt(p []byte, off int64) (int, error) {
	f.writes++
	return copy(f.b[off:], p), nil
}

// TestWriteSegmentsSorts: segments that do not overlap are coalesced
// whatever their order (a Go module's last segment comes early, which
// made every later one a write of its own: ~43,000 writes, ~36 ms a load).
func TestWriteSegmentsSorts(t *testing.T) {
	segs := []instrument.Segment{{Offset: 9000, Data: []byte{9}}}
	for off := 0; off < 8000; off += 100 {
		segs = append(segs, instrument.Segment{Offset: uint32(off), Data: []byte{1, 2, 3}})
	}
	f := &sparseFile{b: make([]byte, 9001)}
	if err := writeSegments(f, segs); err != nil {
		t.Fatal(err)
	}
	if want := (instrument.Image{Size: 9001, Segments: segs}).Bytes(); !bytes.Equal(f.b, want) {
		t.Fatal("the file is not what the segments write")
	}
	if f.writes > 2 {
		t.Errorf("%d segments took %d writes, want 2 (two runs: 0–8000 and 9000)", len(segs), f.writes)
	}
}
