// Package leading is leader election among the replicas of one operator,
// what controller-runtime users expect and Kopf's users asked for (Kopf
// #734, #1266): the replicas compete for one coordination.k8s.io/v1 Lease
// by client-go's leader election rules, and only the holder handles
// changes, timers and daemons.
//
// # How it pauses the host
//
// A replica starts with the gate's "leader-election" blocker on (package
// gate), so it handles nothing before it leads; its watches run all the
// same, so its caches are warm when it takes over (no re-list at
// failover). When it acquires the Lease the blocker goes; the reactor then
// queues every cached object and starts the timers and daemons.
//
// When it loses the Lease (it could not renew within RenewDeadline) it
// blocks the gate at once — no new cycle or timer run starts — and waits
// for the cycles in flight, bounded by LeaseDuration − RenewDeadline, the
// margin before another replica may acquire the Lease; daemons are asked to
// stop with the reason "pausing". It then campaigns again (controller-
// runtime exits the process instead).
//
// At a clean stop the host releases the Lease only after its operator has
// stopped (cycles drained, daemons stopped), so the next leader takes over
// at once and never overlaps with it. A replica killed with SIGKILL is
// replaced after LeaseDuration (plus up to RetryPeriod).
//
// Admission webhooks are not behind the gate: every replica serves them.
// The election itself runs in host/internal/kube (kube.Client.Elect, the
// host's own elector with client-go's rules: client-go's package would
// link its whole typed clientset); this package decides what leading means.
package leading
