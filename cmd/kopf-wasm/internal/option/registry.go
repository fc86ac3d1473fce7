package option

import "github.com/spf13/pflag"

// Registry is how commands reach OCI registries.
type Registry struct {
	// PlainHTTP speaks HTTP rather than HTTPS to registries; local ones
	// (localhost, 127.0.0.1, [::1]) always get plain HTTP.
	PlainHTTP bool
	// Config is the Docker config file with credentials; "" means
	// $DOCKER_CONFIG/config.json, else ~/.docker/config.json.
	Config string
}

// ApplyFlags declares --plain-http and --registry-config.
func (o *Registry) ApplyFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.PlainHTTP, "plain-http", false,
		"speak HTTP, not HTTPS, to OCI registries (always so for localhost, 127.0.0.1 and [::1])")
	fs.StringVar(&o.Config, "registry-config", "",
		"the Docker config file with registry credentials (default: $DOCKER_CONFIG/config.json, else ~/.docker/config.json)")
}
