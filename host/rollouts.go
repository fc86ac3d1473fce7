package host

import (
	"context"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// loadRollouts pulls, verifies and loads the canary and shadow versions
// of opts and pairs each with the module of mods its manifest names.
func loadRollouts(ctx context.Context, opts Options, rt *wasmrt.Runtime, verifier *modules.Verifier, mods []*wasmrt.Module) (map[string]reactor.Rollout, error) {
	if len(opts.Canaries) == 0 && len(opts.Shadows) == 0 {
		return nil, nil
	}
	serving := map[string]bool{}
	for _, m := range mods {
		serving[m.Manifest().Module.Name] = true
	}
	out := map[string]reactor.Rollout{}
	load := func(flag, source string) (*wasmrt.Module, error) {
		paths, refs, err := modules.PullAll(ctx, []string{source}, opts.newPuller)
		if err != nil {
			return nil, err
		}
		files, err := modules.Files(paths)
		if err != nil {
			return nil, err
		}
		if len(files) != 1 {
			return nil, fmt.Errorf("%w: %s %s names %d modules; name one .wasm file or reference", ErrUsage, flag, source, len(files))
		}
		if err := modules.VerifyFiles(verifier, files, refs); err != nil {
			return nil, err
		}
		loaded, err := modules.LoadAll(ctx, rt, files)
		if err != nil {
			return nil, err
		}
		name := loaded[0].Manifest().Module.Name
		if !serving[name] {
			return nil, fmt.Errorf("%w: %s %s is module %q, which no MODULE argument serves; name its stable version too", ErrUsage, flag, source, name)
		}
		return loaded[0], nil
	}
	for _, c := range opts.Canaries {
		m, err := load("canary", c.Module)
		if err != nil {
			return nil, err
		}
		r := out[m.Manifest().Module.Name]
		if r.Canary != nil {
			return nil, fmt.Errorf("%w: two canaries of module %q; give one", ErrUsage, m.Manifest().Module.Name)
		}
		r.Canary, r.Percent = m, c.Percent
		out[m.Manifest().Module.Name] = r
	}
	for _, source := range opts.Shadows {
		m, err := load("shadow", source)
		if err != nil {
			return nil, err
		}
		r := out[m.Manifest().Module.Name]
		if r.Shadow != nil {
			return nil, fmt.Errorf("%w: two shadows of module %q; give one", ErrUsage, m.Manifest().Module.Name)
		}
		r.Shadow = m
		out[m.Manifest().Module.Name] = r
	}
	return out, nil
}
