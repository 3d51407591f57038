// Package launcherpod renders the launcher Pod of a VirtualMachineInstance: the one contract
// shared by the controller that creates the pod, the launcher that runs inside it and the node
// agent that reaches into it. Render is a pure function of the instance and a Config, so the
// pod is identical wherever it is computed.
//
// The paths (Private*, Disks*, Bin*) are paths INSIDE the pod; the node agent reaches the
// `private` emptyDir through the kubelet's pod directory.
package launcherpod
