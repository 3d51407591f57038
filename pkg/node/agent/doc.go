// Package agent is the reconcile loop of nativevirt-handler, the node agent.
//
// It watches the VMIs whose status.nodeName is this node (a field selector
// served by the apiserver) and their launcher pods, and for each one:
// attaches to the launcher's libvirt daemon through the pod's private
// emptyDir, prepares local disks (emptyDisk files, cloud-init ISOs), defines
// and starts the domain once, keeps the VMI status (phase, interfaces,
// conditions, guest OS) in step with the domain, and shuts the guest down
// within its grace period when the VMI is deleted. Lifecycle events from
// libvirt and a periodic resync feed the queue; the domain checkpoint
// (package domains) makes restarts of the agent invisible to the guests.
//
// It also watches the VMIs whose migration target is this node (label
// kubevirt.io/migrationTargetNodeName) and plays both ends of a live
// migration: as target it prepares the target launcher and accepts the
// source agent's tunnels; as source it runs the libvirt migration through
// them (see migration_source.go for the rule that keeps one running copy).
//
// The work is split into types with one job each, wired by Agent (agent.go,
// which owns the queue and hands each part only what it uses):
//
//   - launcherSet (launchers.go): the connections to the launchers' libvirt
//     daemons, their event watches and ready markers;
//   - instanceSync (instance_sync.go): the sync decision for a VMI of this node;
//   - domainPreparer (disks.go, network.go, seedcaps.go): what a launcher pod
//     needs before a domain is defined or migrated there;
//   - guestInfo (status.go, domainstatus.go, guestcredentials.go): the status
//     of a running VMI and what its guest agent reports or is told;
//   - freezer (freeze.go): file system freezes and their automatic thaw;
//   - migrationSource (migration_source.go, migration_job.go) and
//     migrationTarget (migration_target.go, tunnels.go): the two ends of a
//     live migration;
//   - commands and guestStreams (commands.go, streams.go, screenshot.go): the requests of
//     the stream server (Agent.Backend).
//
// They stay one package because they share the launcher attachment and the
// status helpers: separate packages would have to export those internals, and
// the tests drive the whole agent against one fake libvirt.
package agent
