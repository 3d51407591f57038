// Package instancetype stores the four kinds of instancetype.kubevirt.io: instance types and
// preferences, each namespaced and cluster-wide. They have a spec and no status, so each has one
// strategy (no /status), and they share it: the kinds differ only in their Go type, their scope
// and their validation.
//
// Discovery follows KubeVirt's CRDs: the same short names, and the namespaced kinds (only) in
// the category `all`. `kubectl get` shows NAME and AGE, as for a CRD without printer columns.
package instancetype
