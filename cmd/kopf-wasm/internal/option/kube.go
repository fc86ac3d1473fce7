package option

import "github.com/spf13/pflag"

// Kube selects the cluster as kubectl does.
type Kube struct {
	// Kubeconfig is the kubeconfig file; "" means $KUBECONFIG,
	// ~/.kube/config, then the in-cluster service account.
	Kubeconfig string
	// Context is the kubeconfig context; "" means the current one.
	Context string
}

// ApplyFlags declares --kubeconfig and --context.
func (o *Kube) ApplyFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fs.StringVar(&o.Context, "context", "", "the kubeconfig context to use (default: its current context)")
}
