// Package indexing serves Kopf's indexes (@kopf.index, Kopf §10.2): the
// in-memory key → values maps that index handlers fill from every object
// of their resources, and that every handler of their module reads.
//
// # What it keeps
//
// One [Index] per index handler (its id is the index's name), in one set
// per module. An index maps a key to the values that objects contributed
// under it, one value per object and key (Kopf's Store: unordered,
// duplicates allowed). What a handler returns decides the object's
// contributions, as Kopf's rules say:
//
//   - a JSON object: each member's name is a key, its value the object's
//     value under that key; keys the object contributed before and no
//     longer returns are dropped (an empty object drops them all);
//   - any other value X: the object's only contribution is X under the
//     key null;
//   - null or nothing: the object's previous values are kept.
//
// A deleted object, or one that no longer passes the handler's filters,
// contributes nothing. Updates cost O(keys of the object): a reverse map
// remembers where each object's values are. Empty keys are removed.
//
// Keys are JSON object member names, so they are strings; the key of
// non-object results is null. A look-up key that is not a string (a
// number, true) is matched by its JSON text, which is what encoding a Go
// map[int]T gives; null matches the null key. Kopf's tuple keys,
// {(namespace, name): value}, are JSON arrays: a handler keys its result
// by the array's compact text (the SDKs' IndexKey), and a look-up by the
// array itself finds them.
//
// # Errors
//
// As Kopf's (the errors mode of index handlers defaults to ignored): an
// ignored error keeps the object's previous values; a temporary error
// drops them and leaves the object out of the index until its next watch
// event after the delay (the retry state is in memory only); a permanent
// error (or retries or timeout used up) leaves it out until it is deleted
// or the module is swapped.
//
// # When it runs
//
// The reactor calls [Engine.Observe] from the watch's event delivery, for
// every event of a resource with index handlers, before the object is
// queued for its changing handlers: the initial listing is indexed as it
// is delivered, so once a watch has synced, its objects are in the
// indexes. [Engine.Install] takes a new registry (at start and on every
// swap of modules): the indexes of new and changed modules start empty
// and not ready; the reactor fills them ([Engine.Rebuild] from the watch
// caches, or the initial listing of new watches) and marks them ready
// ([Engine.MarkReady]). The reactor holds back the resource handlers of a
// module until [Engine.Ready] says its indexes are complete (Kopf's
// guarantee); activity handlers are not held back.
//
// # What requests carry
//
// A request must not grow with the index. Every request of a module's
// handlers carries the module's indexes ([abi.Request.Indices]) whole only
// while the encoded index is at most settings.Execution.IndexInline bytes
// (cached between changes, so a call costs no encoding); a larger index is
// carried as null, and the guest reads it through the index_lookup host
// function: by key ([abi.IndexLookupRequest.Key], O(values under the key))
// or, when the handler asks for the whole index, once per call
// ([abi.IndexLookupRequest.All]). The engine implements
// execution.Indices; every call goes through the execution layer.
package indexing
