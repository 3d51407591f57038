package agent

// Event reasons the node agent records on VMIs, KubeVirt's virt-handler's: what `kubectl
// describe vmi` shows of the guest's life on its node, and why a start does not go on.
const (
	// EventCreated: the domain is defined.
	EventCreated = "Created"
	// EventStarted: the domain started.
	EventStarted = "Started"
	// EventShuttingDown: the guest was asked to shut down (ACPI).
	EventShuttingDown = "ShuttingDown"
	// EventStopped: the guest stopped for good (Normal: shut down; Warning: failed).
	EventStopped = "Stopped"
	// EventSyncFailed: a sync of the VMI failed; the message is the error. It is retried.
	EventSyncFailed = "SyncFailed"
)
