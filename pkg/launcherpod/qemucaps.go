package launcherpod

// libvirt probes the QEMU binary (50-odd QMP queries, both accelerators when /dev/kvm is there)
// the first time a daemon needs its capabilities, and keeps the answer in a cache file that it
// trusts only while the binaries (their ctime), libvirt's version and the host's KVM facts are
// the same. A launcher pod's libvirtd starts with an empty cache, so the first define in every
// pod pays the probe. The node agent's DaemonSet runs the probe once per node in a container of
// the launcher image (the same image snapshot on the node: the same ctimes) and the agent puts
// the answer into each launcher container before its first define.
const (
	// QEMUCapabilitiesCache is libvirt's capability cache directory in the compute container.
	QEMUCapabilitiesCache = "/var/cache/libvirt/qemu/capabilities"
	// QEMUCapabilitiesKVM and QEMUCapabilitiesTCG name the two kinds of probe below the node's
	// capability directory: with /dev/kvm usable (launcher pods that request KVMResource), and
	// without (emulation only).
	QEMUCapabilitiesKVM = "kvm"
	QEMUCapabilitiesTCG = "tcg"
)
