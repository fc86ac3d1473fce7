package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// reloader watches the module files of a running host (and the OCI tags
// that modules were pulled by) and swaps in a new version when a file
// changes or a tag moves: it compiles and validates the new version
// in the background, then the operator switches to it between processing
// cycles. A version that does not load is logged and the old one keeps
// serving. Files are polled (size, modification time, then the digest), so
// that editors' and build tools' atomic renames are seen as well as writes.
type reloader struct {
	rt    *wasmrt.Runtime
	set   *moduleSet
	log   *slog.Logger
	files []watchedFile

	// Modules named by OCI tags: pull resolves a tag again, every tagEvery.
	pull     *modules.Puller
	tagEvery time.Duration
	// verify checks a changed module file (not a pulled one: pull did)
	// before it loads; nil checks nothing.
	verify *modules.Verifier
}

type watchedFile struct {
	path   string
	stamp  fileStamp
	digest string
	mod    *wasmrt.Module
	// ref is the OCI tag the file was pulled from ("" for files and
	// digests); polled is when it was last resolved.
	ref    string
	polled time.Time
	// refused is the last refusal of the tag's version by the verification
	// policy, logged once rather than at every poll.
	refused string
}

// pollTags makes the reloader resolve the OCI tags among the modules
// (refs: the pulled files by their references) every
// settings.Modules.TagPollInterval (0: never).
func (r *reloader) pollTags(opts Options, refs map[string]string) error {
	if opts.Settings.Modules.TagPollInterval <= 0 {
		return nil
	}
	now := time.Now()
	for i := range r.files {
		if ref, ok := refs[r.files[i].path]; ok && !modules.Pinned(ref) {
			r.files[i].ref, r.files[i].polled = ref, now
		}
	}
	for _, f := range r.files {
		if f.ref != "" {
			var err error
			r.pull, err = opts.NewPuller()
			r.tagEvery = opts.Settings.Modules.TagPollInterval
			return err
		}
	}
	return nil
}

// resolveTag pulls f's tag again when it is due; a tag that moved gives a
// new file in the cache, which check then loads.
func (r *reloader) resolveTag(ctx context.Context, f *watchedFile) {
	if f.ref == "" || r.pull == nil || time.Since(f.polled) < r.tagEvery {
		return
	}
	f.polled = time.Now()
	path, err := r.pull.Pull(ctx, f.ref)
	if errors.Is(err, modules.ErrRefused) {
		if err.Error() != f.refused {
			f.refused = err.Error()
			metrics.ModuleFailed(f.mod.Manifest().Module.Name)
			r.log.Error(fmt.Sprintf("module %s: the tag's new version is refused; the old one keeps serving: %v", f.ref, err))
		}
		return
	}
	if err != nil {
		r.log.Warn(fmt.Sprintf("module %s: resolving the tag failed, the current version keeps serving: %v", f.ref, err))
		return
	}
	f.refused = ""
	if path != f.path {
		f.path, f.stamp = path, fileStamp{}
	}
}

type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: fi.Size(), modTime: fi.ModTime()}, nil
}

func newReloader(rt *wasmrt.Runtime, set *moduleSet, files []string, mods []*wasmrt.Module, log *slog.Logger) *reloader {
	r := &reloader{rt: rt, set: set, log: log}
	for i, f := range files {
		stamp, _ := stampOf(f)
		r.files = append(r.files, watchedFile{path: f, stamp: stamp, digest: mods[i].Digest(), mod: mods[i]})
	}
	return r
}

// run polls until ctx ends.
func (r *reloader) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.poll(ctx)
		}
	}
}

// poll swaps in the files that changed since the last poll.
func (r *reloader) poll(ctx context.Context) {
	prev := append([]watchedFile(nil), r.files...)
	changed := false
	for i := range r.files {
		if r.check(ctx, &r.files[i]) {
			changed = true
		}
	}
	if !changed {
		return
	}
	mods := make([]*wasmrt.Module, len(r.files))
	for i, f := range r.files {
		mods[i] = f.mod
	}
	start := time.Now()
	if err := r.set.setArgs(ctx, mods); err != nil {
		r.log.Error(fmt.Sprintf("the new module versions cannot be served, the old ones keep serving: %v", err))
		for i := range r.files {
			if r.files[i].mod != prev[i].mod {
				r.files[i].mod.Close()
				r.files[i].mod, r.files[i].digest = prev[i].mod, prev[i].digest // the stamp stays: no retry until it changes again
			}
		}
		return
	}
	r.log.Info("modules reloaded", "swap", time.Since(start))
}

// check loads a changed file; it reports whether f now holds a new module.
func (r *reloader) check(ctx context.Context, f *watchedFile) bool {
	r.resolveTag(ctx, f)
	stamp, err := stampOf(f.path)
	if err != nil || stamp == f.stamp {
		return false // a file being replaced may be missing for a moment
	}
	wasm, err := os.ReadFile(f.path)
	if err != nil {
		return false
	}
	f.stamp = stamp
	digest := wasmrt.Digest(wasm)
	if digest == f.digest {
		return false
	}
	if f.ref == "" {
		if err := r.verify.File(f.path, wasm); err != nil {
			metrics.ModuleFailed(f.mod.Manifest().Module.Name)
			r.log.Error(fmt.Sprintf("module %s changed, but the new version is refused; the old one keeps serving: %v", f.path, err),
				"digest", digest)
			return false
		}
	}
	start := time.Now()
	mod, err := r.rt.Load(ctx, f.mod.Manifest().Module.Name, wasm)
	if err != nil {
		metrics.ModuleFailed(f.mod.Manifest().Module.Name)
		r.log.Error(fmt.Sprintf("module %s changed, but the new version does not load; the old one keeps serving: %v", f.path, err),
			"digest", digest)
		return false
	}
	r.log.Info("module changed", "file", f.path, "reference", f.ref, "old", f.digest, "new", digest, "load", time.Since(start))
	f.digest, f.mod = digest, mod
	return true
}
