// Package streams is the protocol between nativevirt-apiserver and the node agent
// (nativevirt-handler). Both sides import it; it imports neither.
//
// The node agent serves HTTPS (default port DefaultPort) with mutual TLS. Both
// ends are certified by the same dedicated "nativevirt node CA": the agent
// accepts client certificates carrying the common name APIServerCommonName
// (the apiserver: VMI streams and commands only) or HandlerCommonName (another
// node agent: migration tunnels only), and its clients accept any serving
// certificate that chains to that CA but does not carry the apiserver's name.
// The apiserver finds an agent through the Node annotation
// HandlerEndpointAnnotation ("host:port"), which the agent writes for its own
// node.
//
// Per VMI the agent serves, below Path(namespace, name, action):
//
//   - console and vnc: GET with a WebSocket upgrade, subprotocol Subprotocol
//     ("plain.kubevirt.io"), binary frames of raw bytes. This is exactly what
//     virtctl speaks to the subresources, so the apiserver reverse-proxies the
//     upgrade unchanged. Several console sessions share one serial console: the
//     agent sends guest output to every session and forwards input from each.
//   - pause, unpause and softreboot: PUT; 200 on success, 409 with a message when
//     the VMI's state does not allow the action, 404 when the agent knows no
//     domain for the VMI.
//
// Every request carries the header VMIUIDHeader with the VMI's uid; the agent
// answers 409 when it differs from the uid of the domain it runs, so a request
// meant for a deleted VMI never reaches a new one of the same name.
//
// Live migration: the source node agent opens, for every connection the
// source launcher's libvirt and QEMU make (MigrationChannels: libvirt, qemu,
// nbd), a tunnel to the target node agent at MigrationTarget.Path ("/v1/
// migrations/{migrationUID}/{channel}"): a GET with "Connection: Upgrade" and
// "Upgrade: nativevirt-migration/1" answered by "101 Switching Protocols",
// after which the TLS connection carries raw bytes both ways (DialTunnel,
// AcceptTunnel, Splice). The target agent accepts only a migration it is the
// target of and connects the tunnel to the target launcher's libvirt socket or
// to the channel's socket in the target pod's migration directory.
package streams
