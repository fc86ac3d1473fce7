// Command kube-apiserver is the real Kubernetes API server, built from the
// pinned k8s.io/kubernetes module so that tests and the demo need nothing but
// the Go module proxy. hack/controlplane/build.sh builds it into the cache.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
