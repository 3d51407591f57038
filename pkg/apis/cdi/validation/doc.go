// Package validation holds NativeVirt's rules for the cdi.kubevirt.io objects as pure functions
// returning a field.ErrorList that names each offending field (JSON paths, e.g.
// spec.source.http.url), so that the API server answers 422 with one cause per broken rule.
//
// The rules follow CDI's validating webhook (pkg/apiserver/webhooks/datavolume-validate.go and
// its siblings), with CDI's messages where CDI has one: a DataVolume has either a source or a
// sourceRef (or an externally populated claim), and pvc xor storage; its spec cannot change once
// created. What needs other objects (does the destination claim already exist, may the user clone
// from the source namespace) is not decided here. Sources NativeVirt does not import from yet
// (s3, gcs, imageio, vddk) are refused as not supported, never silently accepted.
//
// The registry checks ObjectMeta (namespace, name syntax of every object) with apimachinery
// before these functions run.
package validation
