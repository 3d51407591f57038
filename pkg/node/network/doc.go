// Package network prepares the pod network of the masquerade binding inside a
// launcher pod, as KubeVirt's virt-handler does: the node agent, privileged,
// enters the pod's network namespace; the launcher and QEMU stay unprivileged.
//
// For the pod's interface on the pod network (eth0) and the guest interface
// on it (convert.PodInterfaces), Prepare makes
//   - a bridge k6t-eth0 holding the gateway address (10.0.2.1/24 by default),
//     with a fixed MAC (the guest's ARP entry for its gateway stays valid
//     wherever the pod is) and the MTU of eth0;
//   - a persistent tap device tap0 on the bridge, owned by root (QEMU runs as
//     root in the launcher container and opens it through /dev/net/tun, a
//     device plugin resource), multi-queue when the guest has several queues;
//   - IPv4 forwarding, and route_localnet on the bridge (connections from the
//     pod's loopback, e.g. kubectl port-forward, are sent on to the guest);
//   - an nftables table `ip nativevirt`: inbound traffic on eth0 is DNATed to
//     the guest (every port, or only the declared ports), and so is traffic
//     from the pod to 127.0.0.1 with its source rewritten to the gateway; the
//     guest's outbound traffic is masqueraded to the pod's address;
//   - the DHCP configuration (package dhcp) in the launcher's private
//     directory, which the launcher serves on the bridge.
//
// Everything is applied idempotently: links are created only when missing and
// then set to the wanted state, addresses replaced, and the nftables table
// replaced in one atomic transaction, so a node agent that restarts and
// prepares again changes nothing and duplicates no rule. Nothing is torn
// down: the namespace, and all of it, goes away with the pod.
//
// The agent reaches the namespace through the launcher's libvirt socket: the
// peer credentials of a connection name the daemon's process (the agent runs
// with the host's PID namespace), whose /proc/<pid>/ns/net is the pod's.
// Commands run in the namespace through nsenter with `ip`, `sysctl` and `nft`
// (iproute2, procps, nftables in the node agent's image).
//
// Files: plan.go (what to build, from the VMI), links.go (ip commands),
// nftables.go (the ruleset), netns.go (running commands in a namespace),
// peer.go (finding a launcher's namespace), prepare.go (the entry point).
package network
