// Command etcd is the real etcd server, built from the pinned
// go.etcd.io/etcd/server/v3 module. hack/controlplane/build.sh builds it into
// the cache.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
