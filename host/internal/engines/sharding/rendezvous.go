package sharding

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"slices"
	"strings"
)

// View is one membership: the identities of the live replicas, sorted.
// Objects are spread over its members by rendezvous (highest random
// weight) hashing of their UIDs: each member scores the object, the
// highest score owns it. A member that joins takes about 1/N of every
// other member's objects; one that leaves gives its objects to the others
// evenly; no other object moves.
type View struct {
	// Members are the replicas' identities, sorted.
	Members []string
	// ID names the view on the Leases: a digest of the members ("" for the
	// empty view, which owns nothing).
	ID     string
	hashes []uint64
}

// NewView returns the view of these members (duplicates dropped).
func NewView(members []string) View {
	m := slices.Clone(members)
	slices.Sort(m)
	m = slices.Compact(m)
	v := View{Members: m, hashes: make([]uint64, len(m))}
	for i, id := range m {
		v.hashes[i] = fnv64(id)
	}
	if len(m) > 0 {
		sum := sha256.Sum256([]byte(strings.Join(m, "\n")))
		v.ID = hex.EncodeToString(sum[:8])
	}
	return v
}

// Owner returns the member that owns the object with this UID ("" in the
// empty view).
func (v View) Owner(uid string) string {
	if len(v.Members) == 0 {
		return ""
	}
	h := fnv64(uid)
	best, bestScore := 0, uint64(0)
	for i, mh := range v.hashes {
		if s := mix(mh ^ h); i == 0 || s > bestScore {
			best, bestScore = i, s
		}
	}
	return v.Members[best]
}

// Has reports whether id is a member.
func (v View) Has(id string) bool {
	_, found := slices.BinarySearch(v.Members, id)
	return found
}

func fnv64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// mix is SplitMix64's finalizer: it spreads the combined hashes so that
// the member with the highest score is a fair draw.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
