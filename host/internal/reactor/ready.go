package reactor

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Ready says whether the operator serves every change: it is running,
// the initial listing of every watched resource has been delivered, and no
// watch is stalled (kube.Client.Stalled). The error says what is missing,
// for the host's /readyz.
func (o *Operator) Ready() error {
	o.mu.RLock()
	running := o.runCtx != nil
	var unsynced []string
	for key, s := range o.served {
		if s.watch != nil && !s.watch.HasSynced() {
			unsynced = append(unsynced, key)
		}
	}
	o.mu.RUnlock()
	if !running {
		return errors.New("the operator is not running yet")
	}
	if len(unsynced) > 0 {
		slices.Sort(unsynced)
		return fmt.Errorf("the initial listing of %s is not done", strings.Join(unsynced, ", "))
	}
	if stalled := o.kube.Stalled(); len(stalled) > 0 {
		return fmt.Errorf("stalled watches: %s", strings.Join(stalled, "; "))
	}
	return nil
}
