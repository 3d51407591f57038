// Package validation holds NativeVirt's rules for the instancetype.kubevirt.io objects as pure
// functions returning a field.ErrorList that names each offending field, so that the API server
// answers 422 with one cause per broken rule (never a 500, never a panic on a nil pointer).
//
// An instance type or a preference sets fields of the instances made from it, so it is held to
// the instance's rules: each value accepted here is one the instance's validation
// (pkg/apis/kubevirt/validation) accepts, through the same exported checks, and the features
// NativeVirt refuses in an instance are refused here too, from the table kept next to the
// instance's (validation.CheckUnsupportedInstancetypeSpec and CheckUnsupportedPreferenceSpec).
//
// The spec of either may change after creation, as in KubeVirt: a VirtualMachine keeps the
// revision it captured. The registry checks ObjectMeta (labels, annotations, immutable name)
// with apimachinery before these functions run.
package validation
