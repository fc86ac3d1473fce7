package main

import (
	"io"
	"strings"
	"testing"
)

// TestGroupSmaps sorts each kind of mapping into its group.
func TestGroupSmaps(t *testing.T) {
	const smaps = `00400000-01400000 r-xp 00000000 08:01 123 /work/bin/benchoperator
Size:              16384 kB
Rss:               10240 kB
6f86c000000-6f86ec00000 ---p 00000000 00:00 0 
Rss:                   0 kB
6f86ec00000-6f874800000 rw-p 00000000 00:00 0 
Size:              94208 kB
Rss:               30720 kB
6f874800000-6f878000000 ---p 00000000 00:00 0 
Rss:                   0 kB
7f0000000000-7f0100000000 rw-p 00000000 00:00 0 
Size:            4194304 kB
Rss:                5120 kB
7f0100000000-7f0100021000 rw-p 00000000 00:00 0 
Rss:                 100 kB
7f0100021000-7f0104000000 ---p 00000000 00:00 0 
Rss:                   0 kB
7f0200000000-7f0300000000 rw-p 00000000 00:01 77 /memfd:kopf-wasm-memory (deleted)
Rss:                2048 kB
7f0400000000-7f0400800000 r-xp 00000000 00:00 0 
Rss:                8192 kB
7f0500000000-7f0500400000 r--p 00000000 08:01 9 /tmp/w/wasm-cache-kopf-wasm/abc
Rss:                1024 kB
7f0600000000-7f0600100000 rw-p 00000000 00:00 0 
Rss:                 512 kB
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]
Rss:                 132 kB
VmFlags: rd wr mr mw me gd ac
`
	g, err := groupSmaps(strings.NewReader(smaps), "/work/bin/benchoperator", 0x6f870000000)
	if err != nil {
		t.Fatal(err)
	}
	want := peakGroups{Binary: 10, GoHeap: 30, LinearMemories: 7, CompiledCode: 8, ModuleFiles: 1, Rest: 744.0 / 1024,
		Total: 10 + 30 + 7 + 8 + 1 + 744.0/1024}
	if g != want {
		t.Errorf("groups %+v, want %+v", g, want)
	}
	if _, err := groupSmaps(strings.NewReader("Rss: 4 kB\n"), "", 0); err == nil {
		t.Error("an Rss line before any mapping: no error")
	}
}

// TestParseDensityHosts: the Rust and Python hosts are contenders and
// start contenders; anything else is refused with the known names.
func TestParseDensityHosts(t *testing.T) {
	o, err := parseDensity([]string{"-contenders", "kopf-wasm-rust,kopf-wasm-python,native", "-start-contenders", "kopf-wasm-python",
		"-peak-snapshots"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Contenders, ",") != "kopf-wasm-rust,kopf-wasm-python,native" || strings.Join(o.StartContenders, ",") != "kopf-wasm-python" ||
		!o.PeakSnapshots {
		t.Errorf("parsed %+v", o)
	}
	if _, err := parseDensity([]string{"-start-contenders", "native"}, io.Discard); err == nil || !strings.Contains(err.Error(), rustContender) {
		t.Errorf("-start-contenders native: %v", err)
	}
}
