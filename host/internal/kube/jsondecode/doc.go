// Package jsondecode holds the host's hand-written decoders of the API
// server's JSON: the watch-event decoder ([WatchDecoder]) and the list
// decoder ([DecodeList]) that kube's informers read every watch stream and
// LIST response with, and the one-pass JSON parser under both (value.go,
// number.go, strings.go, stream.go, managedfields.go).
//
// What they replace, and why: client-go's dynamic client decodes a watch
// stream with a JSON framer, a meta-factory unmarshal for apiVersion and
// kind, the metav1.WatchEvent envelope and then sigs.k8s.io/json for the
// object (unstructured.UnstructuredJSONScheme), reading each event several
// times over: 15-18 % of the host's CPU in the kopfexamples benchmark. Its
// list decoding holds the whole response and decodes it twice. These
// decoders read each event or list item once, one at a time, drop
// metadata.managedFields while parsing when asked (usually the larger part
// of an object), skip events over a size or depth cap without buffering
// them ([SkippedEvent]), and intern the strings that recur from object to
// object. They build exactly what client-go builds: the same
// map[string]any values (int64 for integers, float64 otherwise), the same
// *unstructured.Unstructured and *metav1.Status objects, an error where
// client-go's decoding fails. The fuzz targets check that against
// client-go on the same input: FuzzParse (sigs.k8s.io/json),
// FuzzWatchDecoderLikeClientGo (client-go's streaming watch decoder),
// FuzzDecodeListLikeClientGo (unstructured.UnstructuredJSONScheme) and
// FuzzDropManagedFields (the parse without managedFields against the whole
// parse with them removed).
//
// Callers: package kube (its watch and list requests). It calls nothing
// but apimachinery's types and, for the rare meta/v1 kinds, its JSON
// decoding.
package jsondecode
