package kube

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaseLock returns the lock of client-go's leader election on the
// coordination.k8s.io/v1 Lease namespace/name, held as identity. Its
// requests go through the client's connection pool, rate limiter and
// request counter.
func (c *Client) LeaseLock(namespace, name, identity string) (resourcelock.Interface, error) {
	cs, err := kubernetes.NewForConfigAndClient(c.cfg, c.hc)
	if err != nil {
		return nil, fmt.Errorf("kube: %w: %v", ErrConfig, err)
	}
	return &resourcelock.LeaseLock{
		LeaseMeta:  metaFor(namespace, name),
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}, nil
}

func metaFor(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}
