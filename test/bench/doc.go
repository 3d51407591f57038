// Package bench measures NativeVirt side by side with the alternatives it replaces: the kubevirt.io
// API through kube-apiserver aggregation, directly against nativevirt-apiserver, and as a
// CustomResourceDefinition carrying the same schema on the same kube-apiserver; scale (10,000
// VirtualMachines); the control plane (VM create → VMI Scheduled) and the console round trip.
//
// Every figure is a ratio or a distribution measured in one run on one machine: the package never
// compares against remembered numbers, and nothing here is a test assertion. Targets are printed
// beside the figures as met or missed. cmd/nativevirt-bench runs the suites (make bench) and
// writes one table per suite to stdout and _output/bench/<suite>.json.
package bench
