package imagebake

import (
	"archive/tar"
	"bytes"
	"io"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// file is one entry of a layer.
type file struct {
	path string // without a leading slash
	mode int64
	data []byte
	dir  bool
}

// layer builds a gzip-compressed layer of files whose every header is
// fixed: the given time, owner root, entries sorted by path.
func layer(files []file, mtime time.Time) (v1.Layer, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.path, Mode: f.mode, ModTime: mtime, Uname: "root", Gname: "root", Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, f.path+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}

// nonRoot is the user the image runs as (distroless' "nonroot").
const nonRoot = "65532"

// baseFiles are the CA certificates and the passwd and group files that
// name the non-root user.
func baseFiles(caCerts []byte) []file {
	return []file{
		{path: "etc", mode: 0o755, dir: true},
		{path: "etc/ssl", mode: 0o755, dir: true},
		{path: "etc/ssl/certs", mode: 0o755, dir: true},
		{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caCerts},
		{path: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{path: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{path: "home", mode: 0o755, dir: true},
		{path: "home/nonroot", mode: 0o700, dir: true},
		{path: "tmp", mode: 0o1777, dir: true},
	}
}
