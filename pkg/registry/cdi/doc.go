// Package cdi stores the four kinds of cdi.kubevirt.io: DataVolumes and DataSources
// (namespaced), StorageProfiles and CDIConfig (cluster-scoped). Each has a spec that users (or
// administrators) write through the main resource and a status that controllers write through
// /status; the strategies keep each side from changing the other.
//
// Discovery follows CDI's CRDs: short names dv/dvs and das, DataVolumes and DataSources in the
// category `all`. `kubectl get dv` shows NAME, PHASE, PROGRESS, RESTARTS and AGE, as CDI's printer
// columns; the other kinds NAME and AGE.
package cdi
