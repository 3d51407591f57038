// Package instancetype expands a VirtualMachine's instance template with the instance type and
// the preference the VirtualMachine references, as KubeVirt 1.7 does when it admits the
// VirtualMachine and when its controller creates the VirtualMachineInstance (KubeVirt's
// pkg/instancetype/apply, pkg/instancetype/preference/{apply,requirements,validation}). The
// package is pure: it reads nothing but its arguments, so the API server (admission, where every
// error becomes a 422) and the VM controller (building the instance) share one implementation.
//
// # API
//
//	Apply(fldPath, it, pref, meta, spec) field.ErrorList
//
// expands meta and spec, a copy of the template, in place. The instance type SETS: the guest's
// CPU (vCPUs laid out by the preference's topology, model, dedicated placement, NUMA, emulator
// thread isolation, realtime, maxSockets), memory (guest, hugepages, maxGuest and the memory
// request lowered by overcommitPercent), node selector, scheduler name, IO threads policy and
// pool, GPUs, host devices, launch security and annotations. A template that sets one of these
// itself conflicts with the instance type. The preference FILLS defaults where the template
// leaves a field unset (devices, features, firmware, machine type, clock, CPU features,
// subdomain, termination grace period, architecture, annotations), and its requirements
// (vCPUs, memory, architecture) must then be met. Either spec may be nil; with both nil nothing
// changes. fldPath is where the template lies in the VirtualMachine (spec.template): a conflict
// names the template's field below it (spec.template.spec.domain.cpu.sockets).
//
//	Topology(guest, pref) (sockets, cores, threads int32, err error)
//	PreferredTopology(pref) PreferredCPUTopology
//	SpreadOptions(pref) (ratio int32, across SpreadAcross)
//
// lay an instance type's vCPUs out as the preference asks.
//
//	CheckRequirements(fldPath, it, pref, spec) field.ErrorList
//
// checks a preference's requirements alone (Apply calls it last).
//
//	SetAnnotations(vm, meta)
//
// records the names of the VirtualMachine's instance type and preference on the instance
// (kubevirt.io/instancetype-name, kubevirt.io/cluster-instancetype-name, kubevirt.io/preference-name,
// kubevirt.io/cluster-preference-name).
//
//	ApplyVolumePreferences(pref, templates)
//
// gives DataVolume templates without a storage class the preferred one, which KubeVirt does to
// the VirtualMachine itself rather than to the instance.
//
// # Errors
//
// Every error names a field and carries KubeVirt's wording:
//
//   - a conflict is field.ErrorTypeInvalid at the template's field, "VM field(s) <path>
//     conflicts with selected instance type" (KubeVirt's pkg/instancetype/conflict);
//   - an instance type whose vCPUs a spread topology cannot divide is field.ErrorTypeInvalid at
//     instancetype.spec.cpu.guest, the path KubeVirt's VM admission reports
//     (pkg/instancetype/preference/validation/cpu.go); an unknown topology, an unknown spread
//     level or a spread ratio below 1 is reported at the preference's field
//     (preference.spec.cpu.preferredCPUTopology, preference.spec.cpu.spreadOptions.across or
//     .ratio, preference.spec.preferSpreadSocketToCoreRatio);
//   - an unmet requirement is field.ErrorTypeNotFound (KubeVirt's cause type FieldValueNotFound),
//     "failure checking preference requirements: ...", at spec.instancetype when the instance
//     type falls short and at the template's field otherwise.
//
// Apply stops where KubeVirt stops: a spread error is returned alone, before anything changes;
// conflicts are returned before the preference is applied (the spec may then be partly
// expanded); requirements are checked last, on the expanded spec.
package instancetype
