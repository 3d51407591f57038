package v1

// Well-known labels and annotations, with KubeVirt's keys so that tools
// written for KubeVirt find what they expect.
const (
	// AppLabel is the label key marking NativeVirt-created objects; launcher
	// pods carry AppLabel=virt-launcher.
	AppLabel string = "kubevirt.io"
	// CreatedByLabel on a launcher pod holds the UID of its instance.
	CreatedByLabel string = "kubevirt.io/created-by"
	// NodeNameLabel on an instance names the node it runs on.
	NodeNameLabel string = "kubevirt.io/nodeName"
	// VirtualMachineLabel is the conventional label naming a VirtualMachine.
	VirtualMachineLabel string = AppLabel + "/vm"
	// DomainAnnotation on a launcher pod holds the name of the instance it runs.
	DomainAnnotation string = "kubevirt.io/domain"
	// MigrationJobLabel on a target launcher pod holds the migration's UID.
	MigrationJobLabel string = "kubevirt.io/migrationJobUID"
	// MigrationTargetNodeNameLabel on an instance names its migration target node.
	MigrationTargetNodeNameLabel string = "kubevirt.io/migrationTargetNodeName"
	// MigrationSelectorLabel on a migration names the instance it migrates.
	MigrationSelectorLabel string = "kubevirt.io/vmi-name"
	// VirtualMachineInstanceFinalizer keeps an instance until its guest is gone.
	VirtualMachineInstanceFinalizer string = "kubevirt.io/foregroundDeleteVirtualMachine"
	// VirtualMachineControllerFinalizer keeps a VirtualMachine until its instance is gone.
	VirtualMachineControllerFinalizer string = "kubevirt.io/virtualMachineControllerFinalize"
	// VirtualMachineInstanceMigrationFinalizer keeps a migration until its target is cleaned up.
	VirtualMachineInstanceMigrationFinalizer string = "kubevirt.io/migrationJobFinalize"
	// DefaultGracePeriodSeconds is the termination grace period used when none is set.
	DefaultGracePeriodSeconds int64 = 30
)
