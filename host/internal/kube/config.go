package kube

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// LoadConfig returns the rest config of a kubeconfig file and context, as
// kubectl picks them: path "" means $KUBECONFIG or ~/.kube/config, and
// then the in-cluster service account; context "" means the file's current
// context. Errors are one line, wrap [ErrConfig], and say what to fix.
func LoadConfig(path, context string) (*rest.Config, error) {
	if path != "" {
		if err := checkReadable(path); err != nil {
			return nil, err
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err == nil {
		return cfg, nil
	}
	where := path
	if where == "" {
		where = strings.Join(rules.Precedence, string(os.PathListSeparator))
	}
	switch {
	case clientcmd.IsEmptyConfig(err) && path == "":
		return nil, fmt.Errorf("kube: %w: no kubeconfig found (looked at %s) and not running in a cluster; name a kubeconfig file or set KUBECONFIG", ErrConfig, where)
	default:
		return nil, fmt.Errorf("kube: %w: %s: %s", ErrConfig, where, oneLine(err.Error()))
	}
}

// checkReadable turns a missing or unreadable kubeconfig into a short
// error before clientcmd reports it at length.
func checkReadable(path string) error {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("kube: %w: %s does not exist", ErrConfig, path)
	case err != nil:
		return fmt.Errorf("kube: %w: cannot read %s: %w", ErrConfig, path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return fmt.Errorf("kube: %w: %s is a folder, not a kubeconfig file", ErrConfig, path)
	}
	return nil
}
