// Package cachedir measures and bounds the host's cache folders (compiled
// modules, pulled modules): [UsageOf] reports what a folder holds and
// [Prune] removes the least recently written files until it fits a size.
// The host's runtime prunes its compile cache when it starts
// (host/internal/modules); `kopf-wasm cache` reports and prunes on demand.
package cachedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Usage is what a cache folder holds: its regular files and their
// total size.
type Usage struct {
	// Dir is the folder.
	Dir string
	// Files is the number of regular files under Dir.
	Files int
	// Bytes is their total size.
	Bytes int64
}

// cacheFile is one file of a cache folder.
type cacheFile struct {
	path  string
	size  int64
	mtime time.Time
}

// UsageOf walks dir and reports what it holds; a folder that does not
// exist holds nothing.
func UsageOf(dir string) (Usage, error) {
	files, err := cacheFiles(dir)
	u := Usage{Dir: dir}
	for _, f := range files {
		u.Files++
		u.Bytes += f.size
	}
	return u, err
}

// Prune removes files from the cache folder dir, the least recently
// written first, until it holds at most maxBytes, and returns what is left
// and what it removed. The caches it is meant for (compiled modules, pulled
// modules) are keyed by content: a removed entry is rebuilt when it is
// next needed, and a host that has the file open keeps reading it.
// maxBytes 0 empties the folder; below 0 removes nothing. Empty folders
// are left in place.
func Prune(dir string, maxBytes int64) (left, removed Usage, err error) {
	left, removed = Usage{Dir: dir}, Usage{Dir: dir}
	files, err := cacheFiles(dir)
	if err != nil {
		return left, removed, err
	}
	for _, f := range files {
		left.Files++
		left.Bytes += f.size
	}
	if maxBytes < 0 {
		return left, removed, nil
	}
	slices.SortFunc(files, func(a, b cacheFile) int { return a.mtime.Compare(b.mtime) })
	var errs []error
	for _, f := range files {
		if left.Bytes <= maxBytes {
			break
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		left.Files--
		left.Bytes -= f.size
		removed.Files++
		removed.Bytes += f.size
	}
	if err := errors.Join(errs...); err != nil {
		return left, removed, fmt.Errorf("prune the cache %s: %w", dir, err)
	}
	return left, removed, nil
}

// cacheFiles lists the regular files under dir; a missing dir has none.
func cacheFiles(dir string) ([]cacheFile, error) {
	var files []cacheFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile, or never there
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		files = append(files, cacheFile{path: path, size: info.Size(), mtime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the cache %s: %w", dir, err)
	}
	return files, nil
}
