// Package qemucaps is everything about libvirt's QEMU capabilities on a node: the probe's
// output published by the launcher image (Publish, run by nativevirt-launcher
// --probe-qemu-capabilities in the node agent's DaemonSet), the CPU models it reports usable
// (UsableCPUModels: the node's labels), and the seeding of launcher containers
// with it before their first define (Seeder), so that their libvirtd does not probe QEMU again.
//
// libvirt probes the QEMU binary (50-odd QMP queries, both accelerators when /dev/kvm is there)
// the first time a daemon needs its capabilities, and keeps the answer in a cache file that it
// trusts only while the binaries (their ctime), libvirt's version and the host's KVM facts are
// the same. A launcher pod's libvirtd starts with an empty cache, so the first define in every
// pod pays the probe. The node agent's DaemonSet runs the probe once per node in a container of
// the launcher image (the same image snapshot on the node: the same ctimes) and the agent puts
// the answer into each launcher container before its first define.
//
// Seeding writes into the container's own root filesystem, reached through
// /proc/<libvirtd's host PID>/root with os.Root: every path is resolved inside the container,
// so a symbolic link planted there cannot make the agent write on the host. libvirt checks a
// cache file before it uses it (binaries, libvirt version, KVM facts) and probes as before when
// it does not match; Seeded.Outcome tells the two apart afterwards.
package qemucaps

const (
	// CacheDir is libvirt's capability cache directory in the compute container.
	CacheDir = "/var/cache/libvirt/qemu/capabilities"
	// KindKVM and KindTCG name the two kinds of probe below the node's capability directory:
	// with /dev/kvm usable (launcher pods that request the KVM device), and without (emulation
	// only).
	KindKVM = "kvm"
	KindTCG = "tcg"
)

// Kind is the kind of capabilities guests need: TCG under emulation, KVM otherwise.
func Kind(emulation bool) string {
	if emulation {
		return KindTCG
	}
	return KindKVM
}
