package oci

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// Media types of the CNCF wasm artifact layout, and the older layer type
// that pulling also accepts.
const (
	MediaTypeConfig     = "application/vnd.wasm.config.v0+json"
	MediaTypeWasm       = "application/wasm"
	MediaTypeWasmLegacy = "application/vnd.wasm.content.layer.v1+wasm"
)

// Scheme is the optional prefix that marks a module argument as a reference.
const Scheme = "oci://"

// Options configure a [Client]. Fields left zero take the default documented
// on them; [Options.withDefaults] is the one place that sets them.
type Options struct {
	// CacheDir is the module cache (see the package comment). "" keeps no
	// cache: Pull always asks the registry.
	CacheDir string
	// PlainHTTP speaks HTTP rather than HTTPS to every registry. Registries
	// on localhost, 127.0.0.1 and [::1] always get plain HTTP.
	PlainHTTP bool
	// DockerConfig is the Docker config file to read credentials from.
	// Default $DOCKER_CONFIG/config.json, else ~/.docker/config.json; a
	// missing file means anonymous access.
	DockerConfig string
	// Logger receives the warning when a tag is served from the cache.
	// Default slog.Default().
	Logger *slog.Logger

	// httpClient is the transport under authentication and retries, a test
	// seam. Default retry.DefaultClient.
	httpClient *http.Client
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.httpClient == nil {
		o.httpClient = retry.DefaultClient
	}
	return o
}

// Client pushes and pulls module artifacts. It is safe for concurrent use.
type Client struct {
	opts  Options
	creds credentials.Store
	cache cache
}

// New returns a client; it reads the Docker config file (not the registry).
func New(opts Options) (*Client, error) {
	opts = opts.withDefaults()
	var store *credentials.DynamicStore
	var err error
	if opts.DockerConfig != "" {
		store, err = credentials.NewStore(opts.DockerConfig, credentials.StoreOptions{})
	} else {
		store, err = credentials.NewStoreFromDocker(credentials.StoreOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("read registry credentials from the Docker config file: %w", err)
	}
	return &Client{opts: opts, creds: store, cache: cache{dir: opts.CacheDir}}, nil
}

// ParseReference parses host[:port]/repository[:tag][@digest], with or
// without the oci:// prefix.
func ParseReference(ref string) (registry.Reference, error) {
	r, err := registry.ParseReference(strings.TrimPrefix(ref, Scheme))
	if err != nil {
		detail := strings.TrimPrefix(err.Error(), errdef.ErrInvalidReference.Error()+": ")
		return registry.Reference{}, fmt.Errorf("%w %q: %s; write it as host[:port]/repository:tag or host[:port]/repository@sha256:<hex>",
			ErrReference, ref, detail)
	}
	return r, nil
}

// repository returns the remote repository of ref with credentials and the
// transport chosen for its host.
func (c *Client) repository(ref registry.Reference) *remote.Repository {
	return &remote.Repository{
		Reference: ref,
		PlainHTTP: c.opts.PlainHTTP || isLocal(ref.Host()),
		Client: &auth.Client{
			Client:     c.opts.httpClient,
			Cache:      auth.NewCache(),
			Credential: credentials.Credential(c.creds),
		},
	}
}

// isLocal reports whether a registry host (with an optional port) is this
// machine, where registries usually serve plain HTTP.
func isLocal(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsReference reports whether a module argument names an OCI artifact
// rather than a file: it starts with oci://, or it contains ':' or '@' and
// names no existing file or folder. So "./mod.wasm" is a file and
// "ghcr.io/acme/handlers:v1" a reference; "oci://" forces one.
func IsReference(arg string) bool {
	if strings.HasPrefix(arg, Scheme) {
		return true
	}
	if _, err := os.Stat(arg); err == nil {
		return false
	}
	return strings.ContainsAny(arg, ":@")
}
