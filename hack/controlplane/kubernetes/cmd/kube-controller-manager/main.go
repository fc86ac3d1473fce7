// Command kube-controller-manager is the real Kubernetes controller manager
// (the garbage collector, namespace deletion, service accounts, ...), built
// from the same pinned k8s.io/kubernetes module as kube-apiserver so that
// tests and the demo need nothing but the Go module proxy.
// hack/controlplane/build.sh builds it into the cache.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
