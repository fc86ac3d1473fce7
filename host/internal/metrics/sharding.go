package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	shardObjects = mustRegister(prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kopf_wasm_shard_objects",
		Help: "Watched objects this replica owns (sharding), as of the last membership check.",
	}))
	shardMembers = mustRegister(prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kopf_wasm_shard_members",
		Help: "Replicas in the last settled membership (sharding); 0 while this replica owns nothing.",
	}))
	shardHandovers = mustRegister(prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kopf_wasm_shard_handovers_total",
		Help: "Memberships this replica adopted (each one a hand-over of objects), with sharding.",
	}))
)

// ShardOwned reports how many watched objects this replica owns.
func ShardOwned(objects int) {
	if enabled.Load() {
		shardObjects.Set(float64(objects))
	}
}

// ShardSettled reports a settled membership of members replicas (0: this
// replica owns nothing, e.g. after it could not renew its Lease).
func ShardSettled(members int) {
	if enabled.Load() {
		shardMembers.Set(float64(members))
	}
}

// ShardHandover counts a membership adopted.
func ShardHandover() {
	if enabled.Load() {
		shardHandovers.Inc()
	}
}
