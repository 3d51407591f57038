// Package validation holds NativeVirt's rules for the kubevirt.io objects as pure functions:
// each takes typed objects and returns a field.ErrorList naming the offending field paths, so
// that the API server answers 422 with one cause per broken rule.
//
// The registry validates ObjectMeta (names, labels, annotations) with apimachinery before these
// functions run and applies the defaults of pkg/apis/kubevirt/v1 before them too. The functions
// still accept un-defaulted objects (unit tests, the lifecycle subresources) and never panic on a
// nil pointer: a panic on a request path would turn a bad request into a 500.
//
// Fields that NativeVirt models for KubeVirt compatibility but does not implement yet are refused
// with Forbidden errors built from one table (unsupported.go); docs/api-support.md is kept in
// step with that table by a unit test.
//
// Instance types and preferences (instancetype.kubevirt.io, validated by
// pkg/apis/instancetype/validation) set fields of the instances made from them, so the checks
// they share with the instance live here: their refused fields (unsupported_instancetype.go) and
// exported checks of single values (values.go) that the instance's validation uses as well.
package validation
