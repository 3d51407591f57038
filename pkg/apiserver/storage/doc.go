// Package storage builds the etcd storage of nativevirt-apiserver's resources: k8s.io/apiserver's
// generic storage and watch cache, made cheaper where profiles of the benchmark showed them
// costly. It exists apart from the server's wiring (pkg/apiserver, pkg/apiserver/app) because
// each piece is an optimisation with its own reasoning and tests, and none of it changes what a
// client sees:
//
//   - Codec (storagecodec.go, intern.go, decodeonce.go): the storage codec reads an object's kind
//     from its first two keys, shares repeated metadata strings between decoded objects, and
//     decodes the bytes of each write once instead of twice.
//   - SharingWatchCaches (cachedstorage.go, sharedspecs.go, sharedversions.go, cachedgets.go):
//     objects entering a watch cache share their specs' repeated maps and the unchanged parts of
//     their previous version, and consistent GETs are answered from the cache when etcd confirms
//     that it holds the current version.
//   - InProcessEtcd (etcdstorage.go): every resource's storage on one in-process client of the
//     embedded etcd member instead of a gRPC connection each; Dialed is k8s.io/apiserver's own.
//
// One piece does change an answer, for clients that k8s.io/apiserver would leave blind:
// SharingWatchCaches also puts every resource's storage behind a revision guard
// (revisionguard.go), which refuses a watch or list from a resourceVersion beyond etcd's current
// revision (a client of an etcd that was replaced) as too large, so that the client lists afresh.
//
// The server wiring needs only these exported names; everything else stays inside.
package storage
