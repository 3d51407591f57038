package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// VirtualMachineInstanceGuestAgentInfo is what the guest agent of a running instance reports:
// the answer of the guestosinfo subresource.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceGuestAgentInfo struct {
	metav1.TypeMeta `json:",inline"`
	// GAVersion is the version of the guest agent.
	// +optional
	GAVersion string `json:"guestAgentVersion,omitempty"`
	// SupportedCommands are the commands the guest agent offers.
	// +optional
	// +listType=atomic
	SupportedCommands []GuestAgentCommandInfo `json:"supportedCommands,omitempty"`
	// Hostname is the guest's host name.
	// +optional
	Hostname string `json:"hostname,omitempty"`
	// OS is the guest's operating system.
	// +optional
	OS VirtualMachineInstanceGuestOSInfo `json:"os,omitempty"`
	// Timezone is the guest's time zone and its offset from UTC in seconds ("UTC, 0").
	// +optional
	Timezone string `json:"timezone,omitempty"`
	// UserList are the users logged in to the guest.
	// +optional
	// +listType=atomic
	UserList []VirtualMachineInstanceGuestOSUser `json:"userList,omitempty"`
	// FSInfo are the guest's mounted file systems.
	// +optional
	FSInfo VirtualMachineInstanceFileSystemInfo `json:"fsInfo,omitempty"`
	// FSFreezeStatus is frozen or thawed when the guest's file systems were frozen by a request.
	// +optional
	FSFreezeStatus string `json:"fsFreezeStatus,omitempty"`
}

// GuestAgentCommandInfo is one command of the guest agent.
type GuestAgentCommandInfo struct {
	Name string `json:"name"`
	// +optional
	Enabled bool `json:"enabled,omitempty"`
}

// VirtualMachineInstanceGuestOSUserList is the answer of the userlist subresource.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceGuestOSUserList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineInstanceGuestOSUser `json:"items"`
}

// VirtualMachineInstanceGuestOSUser is a user logged in to the guest.
type VirtualMachineInstanceGuestOSUser struct {
	UserName string `json:"userName"`
	// +optional
	Domain string `json:"domain,omitempty"`
	// LoginTime is when the user logged in, in seconds since the epoch.
	// +optional
	LoginTime float64 `json:"loginTime,omitempty"`
}

// VirtualMachineInstanceFileSystemInfo are the guest's mounted file systems.
type VirtualMachineInstanceFileSystemInfo struct {
	// +listType=atomic
	Filesystems []VirtualMachineInstanceFileSystem `json:"disks"`
}

// VirtualMachineInstanceFileSystemList is the answer of the filesystemlist subresource.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type VirtualMachineInstanceFileSystemList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualMachineInstanceFileSystem `json:"items"`
}

// VirtualMachineInstanceFileSystemDisk is a disk a guest file system lives on.
type VirtualMachineInstanceFileSystemDisk struct {
	// +optional
	Serial  string `json:"serial,omitempty"`
	BusType string `json:"busType"`
}

// VirtualMachineInstanceFileSystem is one mounted file system of the guest.
type VirtualMachineInstanceFileSystem struct {
	DiskName       string `json:"diskName"`
	MountPoint     string `json:"mountPoint"`
	FileSystemType string `json:"fileSystemType"`
	UsedBytes      int    `json:"usedBytes"`
	TotalBytes     int    `json:"totalBytes"`
	// +optional
	// +listType=atomic
	Disk []VirtualMachineInstanceFileSystemDisk `json:"disk,omitempty"`
}
