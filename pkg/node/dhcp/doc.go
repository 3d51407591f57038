// Package dhcp is the DHCPv4 server of the masquerade binding: it hands the
// one guest of a launcher pod its address on the VM network (KubeVirt's
// 10.0.2.2/24 by default), the gateway (the pod's bridge, 10.0.2.1), the
// pod's DNS resolvers and search domains, the MTU of the pod's interface and
// the interface's extra DHCP options.
//
// The node agent (package network) writes the Config into the launcher's
// private directory once the bridge exists; the launcher, which lives exactly
// as long as the VM, serves it on the bridge (it needs NET_BIND_SERVICE for
// port 67, which Pod Security "baseline" allows; binding to the bridge device
// needs no privilege since Linux 5.7). There is one client and one fixed
// lease, so the server keeps no state: DISCOVER gets an OFFER, a REQUEST for
// the guest's address an ACK and any other a NAK, INFORM an ACK without a
// lease; RELEASE and DECLINE are logged and ignored.
//
// Files: packet.go (the wire format), options.go (option codes and value
// encodings), config.go (the hand-off file), resolv.go (the pod's
// resolv.conf), reply.go (the answer to a request), server.go (the socket).
package dhcp
