package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// Condition reasons and messages the agent writes (KubeVirt's where it has them).
const (
	// ReasonPausedByUser is the Paused condition's reason after a pause request.
	ReasonPausedByUser = "PausedByUser"
	// ReasonPausedIOError is the Paused condition's reason after a disk error.
	ReasonPausedIOError = "PausedIOError"
	// ReasonPausedByMigration is the Paused condition's reason when a
	// migration left the guest paused on the source (outcome unknown).
	ReasonPausedByMigration = "PausedByMigration"
	// ReasonDisksNotLiveMigratable says a volume cannot follow a migration.
	ReasonDisksNotLiveMigratable = "DisksNotLiveMigratable"
	// ReasonInterfaceNotLiveMigratable says an interface cannot be migrated.
	ReasonInterfaceNotLiveMigratable = "InterfaceNotLiveMigratable"
	// podInterfaceName is the launcher pod's interface behind the pod network.
	podInterfaceName = "eth0"
)

// guestInfo computes the status of a running VMI: the domain's state and
// details, and what the guest agent reports (OS, interfaces, file system
// freeze) or was told (access credentials).
type guestInfo struct {
	now     func() time.Time
	freezes *freezer
	secrets secretReader
}

// running is the status of a VMI whose domain is active.
func (g *guestInfo) running(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, l *launcher, info virt.DomainInfo) kubevirtv1.VirtualMachineInstanceStatus {
	now := g.now()
	st := *vmi.Status.DeepCopy()
	setPhase(&st, kubevirtv1.Running, now)
	paused := info.State == virt.StatePaused
	// Asking the guest agent can take seconds: at most once per resync or when it has just
	// (dis)connected, and never while the vCPUs (and so the agent) are paused. A frozen guest's
	// agent answers nothing but its freeze status.
	if !paused && (l.agentChanged.Swap(false) || now.Sub(l.guestOSAt) >= resync) {
		l.guestOSAt = now
		if err := g.freezes.refresh(ctx, l); err == nil && l.freeze.status() != "" {
			// It answered: connected.
			setCondition(&st, cond(kubevirtv1.VirtualMachineInstanceAgentConnected, corev1.ConditionTrue, "", ""), now)
		} else {
			g.guestAgent(ctx, vmi, l, &st, now)
		}
	}
	st.FSFreezeStatus = l.freeze.status()
	g.domain(ctx, vmi, l, &st)
	st.Interfaces = interfaceStatus(vmi, pod, l.podIPs, l.details.Load(), l.guestInterfaces)
	if paused {
		reason, msg := ReasonPausedByUser, "VMI was paused by user"
		switch info.Reason {
		case virt.ReasonIOError:
			reason, msg = ReasonPausedIOError, "VMI was paused because of a disk I/O error"
		case virt.ReasonMigration:
			reason, msg = ReasonPausedByMigration, "VMI was paused by a live migration whose outcome could not be confirmed"
		}
		setCondition(&st, cond(kubevirtv1.VirtualMachineInstancePaused, corev1.ConditionTrue, reason, msg), now)
		setCondition(&st, cond(kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, kubevirtv1.GuestNotRunningReason, "the guest is paused"), now)
	} else {
		removeCondition(&st, kubevirtv1.VirtualMachineInstancePaused)
		setCondition(&st, readyCondition(vmi, pod), now)
	}
	setCondition(&st, liveMigratable(vmi, l.sharedVolumes), now)
	return st
}

// guestAgent is what the guest agent adds to the status: the guest's OS, whether an
// agent is connected (KubeVirt's AgentConnected condition, which virtctl and UIs show), and the
// access credentials it wrote.
func (g *guestInfo) guestAgent(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, l *launcher, st *kubevirtv1.VirtualMachineInstanceStatus, now time.Time) {
	switch os, err := l.conn.GuestOS(l.domain); {
	case err == nil:
		st.GuestOSInfo = guestOSInfo(os)
		setCondition(st, cond(kubevirtv1.VirtualMachineInstanceAgentConnected, corev1.ConditionTrue, "", ""), now)
		if l.guestInterfaces, err = l.conn.GuestInterfaces(l.domain); err != nil {
			klog.FromContext(ctx).V(4).Info("Guest interfaces unknown", "err", err)
		}
	case errors.Is(err, virt.ErrNoGuestAgent):
		removeCondition(st, kubevirtv1.VirtualMachineInstanceAgentConnected)
		l.guestInterfaces = nil
	default:
		klog.FromContext(ctx).V(4).Info("Guest OS unknown", "err", err)
	}
	if c := g.syncCredentials(ctx, vmi, l); c != nil {
		setCondition(st, *c, now)
	}
}

// readyCondition is the Ready condition of a running, unpaused guest. With a readiness probe,
// which the kubelet runs as the launcher pod's, the guest is ready when the pod is (KubeVirt
// copies the pod's condition too): the pod's reason and message say which probe failed.
func readyCondition(vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod) kubevirtv1.VirtualMachineInstanceCondition {
	ready := cond(kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionTrue, "", "")
	if vmi.Spec.ReadinessProbe == nil || pod == nil {
		return ready
	}
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return ready
		}
		return cond(kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, c.Reason, c.Message)
	}
	return cond(kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, kubevirtv1.PodConditionMissingReason,
		"the launcher pod reports no Ready condition yet")
}

// finalStatus is the status of a VMI whose guest stopped for good.
func finalStatus(vmi *kubevirtv1.VirtualMachineInstance, phase kubevirtv1.VirtualMachineInstancePhase, now time.Time) kubevirtv1.VirtualMachineInstanceStatus {
	st := *vmi.Status.DeepCopy()
	setPhase(&st, phase, now)
	removeCondition(&st, kubevirtv1.VirtualMachineInstancePaused)
	removeCondition(&st, kubevirtv1.VirtualMachineInstanceIsMigratable)
	removeCondition(&st, kubevirtv1.VirtualMachineInstanceAgentConnected)
	removeCondition(&st, kubevirtv1.VirtualMachineInstanceAccessCredentialsSynchronized)
	st.FSFreezeStatus = ""
	setCondition(&st, cond(kubevirtv1.VirtualMachineInstanceReady, corev1.ConditionFalse, kubevirtv1.GuestNotRunningReason, "the guest is not running"), now)
	return st
}

// interfaceStatus reports the pod-network interfaces of the VMI. With the
// masquerade binding the guest is reached through the pod's addresses, so
// those are what the status shows (as KubeVirt does). The MAC is the domain's;
// where the guest agent reports an interface with that MAC, its name in the
// guest too (info source "domain, guest-agent").
func interfaceStatus(vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, netnsIPs []string, details *virt.DomainDetails, guest []virt.GuestInterface) []kubevirtv1.VirtualMachineInstanceNetworkInterface {
	podNets := map[string]bool{}
	for _, n := range vmi.Spec.Networks {
		if n.Pod != nil {
			podNets[n.Name] = true
		}
	}
	var ips []string
	for _, ip := range pod.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = []string{pod.Status.PodIP}
	}
	if len(ips) == 0 {
		// The kubelet writes the pod's IPs only at its next status update, often after the
		// domain started: the pod's interface has them already.
		ips = netnsIPs
	}
	var out []kubevirtv1.VirtualMachineInstanceNetworkInterface
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		if !podNets[iface.Name] {
			continue
		}
		s := kubevirtv1.VirtualMachineInstanceNetworkInterface{
			Name: iface.Name, MAC: iface.MacAddress, InfoSource: "domain",
			PodInterfaceName: podInterfaceName, QueueCount: 1, LinkState: "up",
		}
		if details != nil && details.InterfaceMACs[iface.Name] != "" {
			s.MAC = details.InterfaceMACs[iface.Name]
		}
		for _, g := range guest {
			if s.MAC != "" && strings.EqualFold(g.MAC, s.MAC) {
				s.InterfaceName, s.InfoSource = g.Name, "domain, guest-agent"
			}
		}
		if len(ips) > 0 {
			s.IP, s.IPs = ips[0], append([]string(nil), ips...)
		}
		out = append(out, s)
	}
	return append(out, multusInterfaceStatus(vmi, pod, details, guest)...)
}

// liveMigratable is the LiveMigratable condition: volumes on node-local or
// unshared storage cannot follow the guest to another node.
func liveMigratable(vmi *kubevirtv1.VirtualMachineInstance, shared map[string]bool) kubevirtv1.VirtualMachineInstanceCondition {
	for _, v := range vmi.Spec.Volumes {
		switch {
		case v.HostDisk != nil:
			return cond(kubevirtv1.VirtualMachineInstanceIsMigratable, corev1.ConditionFalse, ReasonDisksNotLiveMigratable,
				fmt.Sprintf("cannot migrate VMI: hostDisk volume %s is on this node", v.Name))
		case (v.PersistentVolumeClaim != nil || v.DataVolume != nil) && shared[v.Name]:
			// ReadWriteMany: the target pod attaches the same data.
		case v.PersistentVolumeClaim != nil, v.DataVolume != nil, v.Ephemeral != nil:
			return cond(kubevirtv1.VirtualMachineInstanceIsMigratable, corev1.ConditionFalse, ReasonDisksNotLiveMigratable,
				fmt.Sprintf("cannot migrate VMI: PVC %s is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)", v.Name))
		}
	}
	// The bridge binding on the pod network (which validation refuses) would give the guest the
	// pod's own address; on a Multus network the guest keeps its MAC and address on the target.
	podNets := map[string]bool{}
	for _, n := range vmi.Spec.Networks {
		if n.Pod != nil {
			podNets[n.Name] = true
		}
	}
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		if iface.Bridge != nil && podNets[iface.Name] {
			return cond(kubevirtv1.VirtualMachineInstanceIsMigratable, corev1.ConditionFalse, ReasonInterfaceNotLiveMigratable,
				fmt.Sprintf("cannot migrate VMI which uses a bridge binding on interface %s", iface.Name))
		}
	}
	return cond(kubevirtv1.VirtualMachineInstanceIsMigratable, corev1.ConditionTrue, "", "")
}

func cond(t kubevirtv1.VirtualMachineInstanceConditionType, s corev1.ConditionStatus, reason, msg string) kubevirtv1.VirtualMachineInstanceCondition {
	return kubevirtv1.VirtualMachineInstanceCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

// setCondition adds or replaces c, keeping the transition time when the
// status did not change (so an unchanged observation writes nothing).
func setCondition(st *kubevirtv1.VirtualMachineInstanceStatus, c kubevirtv1.VirtualMachineInstanceCondition, now time.Time) {
	for i, old := range st.Conditions {
		if old.Type != c.Type {
			continue
		}
		c.LastProbeTime = old.LastProbeTime
		c.LastTransitionTime = old.LastTransitionTime
		if old.Status != c.Status {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		st.Conditions[i] = c
		return
	}
	c.LastTransitionTime = metav1.NewTime(now)
	st.Conditions = append(st.Conditions, c)
}

func removeCondition(st *kubevirtv1.VirtualMachineInstanceStatus, t kubevirtv1.VirtualMachineInstanceConditionType) {
	out := st.Conditions[:0]
	for _, c := range st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	st.Conditions = out
}

// setPhase sets the phase and records when it was entered.
func setPhase(st *kubevirtv1.VirtualMachineInstanceStatus, p kubevirtv1.VirtualMachineInstancePhase, now time.Time) {
	if st.Phase == p {
		return
	}
	st.Phase = p
	st.PhaseTransitionTimestamps = append(st.PhaseTransitionTimestamps, kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{
		Phase: p, PhaseTransitionTimestamp: metav1.NewTime(now),
	})
}

// guestOSInfo is KubeVirt's form of the guest OS the guest agent reported.
func guestOSInfo(os virt.GuestOS) kubevirtv1.VirtualMachineInstanceGuestOSInfo {
	return kubevirtv1.VirtualMachineInstanceGuestOSInfo{
		Name: os.Name, KernelRelease: os.KernelRelease, Version: os.Version, PrettyName: os.PrettyName,
		VersionID: os.VersionID, KernelVersion: os.KernelVersion, Machine: os.Machine, ID: os.ID,
	}
}
