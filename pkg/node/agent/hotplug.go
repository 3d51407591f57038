package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

// Events of hotplugged volumes.
const (
	EventVolumeHotplugged = "SuccessfulHotplugVolume"
	EventVolumeUnplugged  = "SuccessfulUnplugVolume"
	EventHotplugFailed    = "FailedHotplugVolume"
)

// hotplugRetry is how soon a VMI is looked at again while a volume is on its way in or out.
const hotplugRetry = 2 * time.Second

// hotplugger plugs the volumes hotplugged into a running instance into its domain, and takes
// out those that left the instance's spec. It keeps no state: what the domain has (disk aliases
// ua-<volume>) and the attachment pods say everything, so an agent restart changes nothing.
//
// A volume's attachment pod mounts the claim on this node; the agent opens the disk image in
// that pod's container (through /proc/<pid>/root, creating a sparse image of the claim's size
// when a fresh filesystem claim has none) and hands QEMU the open file (virDomainFDAssociate),
// then attaches the disk. The launcher pod, unprivileged, never gains a mount.
type hotplugger struct {
	pods corelisters.PodLister
	// containerRoot finds the root of the attachment pod's container that shows probe.
	containerRoot func(podUID types.UID, probe string) (string, error)
	// devices gives launchers hotplugged block devices; processRoot finds the root of a pod's
	// process by its command name (podfs.ProcRoots.ProcessRoot when nil).
	devices     blockDevices
	processRoot func(podUID types.UID, comm string) (string, error)
	report      reporter
}

// hotplugResult is what the hotplugger found: the status of each hotplugged volume (also of
// those being detached), and whether to look again soon.
type hotplugResult struct {
	status map[string]kubevirtv1.VolumeStatus
	retry  bool
}

// sync brings the running domain's hotplugged disks to the instance's spec.
func (h *hotplugger) sync(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod, l *launcher) hotplugResult {
	res := hotplugResult{status: map[string]kubevirtv1.VolumeStatus{}}
	want := launcherpod.HotplugVolumes(vmi, pod)
	specDisks := map[string]*kubevirtv1.Disk{}
	for i := range vmi.Spec.Domain.Devices.Disks {
		specDisks[vmi.Spec.Domain.Devices.Disks[i].Name] = &vmi.Spec.Domain.Devices.Disks[i]
	}
	details := l.details.Load()
	if details == nil || len(want) > 0 || hasForeignDisks(details, specDisks) {
		fresh, err := l.conn.Details(l.domain)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Domain details unknown", "err", err)
			res.retry = true
			return res
		}
		details = &fresh
		l.details.Store(details)
	}
	inUse := make([]string, 0, len(details.DiskTargets))
	for _, t := range details.DiskTargets {
		inUse = append(inUse, t)
	}
	changed := false
	for i := range want {
		v := &want[i]
		st, attached := h.plug(ctx, vmi, l, v, specDisks[v.Name], details, inUse)
		res.status[v.Name] = st
		if attached {
			changed = true
			inUse = append(inUse, st.Target)
		}
		if st.Phase != kubevirtv1.VolumeReady {
			res.retry = true
		}
	}
	for name, target := range details.DiskTargets {
		if specDisks[name] != nil {
			continue
		}
		res.status[name] = h.unplug(ctx, vmi, l, name, target)
		res.retry, changed = true, true
	}
	if changed {
		l.details.Store(nil) // the next status reads the domain again
	}
	return res
}

// hasForeignDisks reports whether the domain has a disk the spec no longer has (one being
// unplugged).
func hasForeignDisks(d *virt.DomainDetails, specDisks map[string]*kubevirtv1.Disk) bool {
	for name := range d.DiskTargets {
		if specDisks[name] == nil {
			return true
		}
	}
	return false
}

// plug attaches the volume's disk unless the domain has it, and returns the volume's status
// and whether it attached the disk now.
func (h *hotplugger) plug(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, l *launcher, v *kubevirtv1.Volume, disk *kubevirtv1.Disk,
	details *virt.DomainDetails, inUse []string) (kubevirtv1.VolumeStatus, bool) {
	claim, _ := launcherpod.HotplugClaim(v)
	st := kubevirtv1.VolumeStatus{Name: v.Name, Phase: kubevirtv1.VolumePending,
		PersistentVolumeClaimInfo: &kubevirtv1.PersistentVolumeClaimInfo{ClaimName: claim}}
	podName := launcherpod.AttachmentPodName(vmi, v.Name)
	st.HotplugVolume = &kubevirtv1.HotplugVolumeStatus{AttachPodName: podName}
	pod, err := h.pods.Pods(vmi.Namespace).Get(podName)
	if err == nil {
		st.HotplugVolume.AttachPodUID = pod.UID
	}
	if target, ok := details.DiskTargets[v.Name]; ok {
		st.Phase, st.Target, st.Reason, st.Message = kubevirtv1.VolumeReady, target, "VolumeReady", "Successfully attach hotplugged volume "+v.Name+" to VM"
		return st, false
	}
	switch {
	case apierrors.IsNotFound(err) || (err == nil && pod.Status.Phase != corev1.PodRunning):
		st.Reason, st.Message = "AttachmentPodPending", "waiting for attachment pod "+podName+" to run on this node"
		return st, false
	case err != nil:
		st.Reason, st.Message = "AttachmentPodUnknown", err.Error()
		return st, false
	case disk == nil:
		st.Reason, st.Message = "NoDisk", "the volume has no disk"
		return st, false
	}
	st.Phase, st.Reason, st.Message = kubevirtv1.HotplugVolumeAttachedToNode, "AttachedToNode", "the claim is mounted on the node by "+podName
	if pod.Annotations[launcherpod.HotplugBlockAnnotation] == "true" {
		return h.plugBlock(ctx, vmi, l, v, disk, pod, inUse, st)
	}
	file, err := h.openImage(pod, v)
	if errors.Is(err, errImportPending) {
		st.Phase, st.Reason, st.Message = kubevirtv1.VolumePending, "DataVolumeNotReady",
			"waiting for DataVolume "+claim+" to be imported (its disk.img)"
		return st, false
	}
	if err != nil {
		h.failed(ctx, vmi, &st, err)
		return st, false
	}
	defer func() { _ = file.Close() }()
	diskXML, target, err := convert.HotplugDisk(disk, false, inUse)
	if err == nil {
		err = l.conn.AttachDisk(l.domain, diskXML, convert.HotplugFDGroup(v.Name), file)
	}
	if err != nil {
		h.failed(ctx, vmi, &st, err)
		return st, false
	}
	st.Phase, st.Reason, st.Message = kubevirtv1.HotplugVolumeMounted, "MountedToPod", "the disk is plugged into the guest"
	st.Target = target
	h.report.event(vmi, corev1.EventTypeNormal, EventVolumeHotplugged, fmt.Sprintf("Volume %s hotplugged into the guest", v.Name))
	return st, true
}

// errImportPending: a DataVolume's claim has no disk image yet (its importer renames disk.img
// into place once complete).
var errImportPending = errors.New("the DataVolume's image is not imported yet")

// openImage opens the disk image of a filesystem claim in the attachment pod's container,
// creating a sparse one of the claim's size in a claim without one (as the launcher does for
// claims it mounts); a DataVolume's image is its importer's to create.
func (h *hotplugger) openImage(pod *corev1.Pod, v *kubevirtv1.Volume) (*os.File, error) {
	root, err := h.containerRoot(pod.UID, filepath.Dir(launcherpod.HotplugImage(v.Name)))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(root, launcherpod.HotplugImage(v.Name))
	_, readOnly := launcherpod.HotplugClaim(v)
	flags := os.O_RDWR
	if readOnly {
		flags = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flags, 0)
	if errors.Is(err, os.ErrNotExist) && v.DataVolume != nil {
		return nil, errImportPending
	}
	if errors.Is(err, os.ErrNotExist) && !readOnly {
		size, perr := strconv.ParseInt(pod.Annotations[launcherpod.HotplugSizeAnnotation], 10, 64)
		if perr != nil || size <= 0 {
			return nil, fmt.Errorf("the claim has no disk image and its size is unknown")
		}
		if f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o660); err == nil {
			if err = f.Truncate(size); err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("sizing the new disk image: %w", err)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening the disk image: %w", err)
	}
	return f, nil
}

// unplug asks the domain to let go of a disk whose volume left the spec; the disk is gone once
// the guest released it.
func (h *hotplugger) unplug(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, l *launcher, name, target string) kubevirtv1.VolumeStatus {
	st := kubevirtv1.VolumeStatus{Name: name, Target: target, Phase: kubevirtv1.HotplugVolumeDetaching, Reason: "Detaching",
		Message:       "the guest is asked to release the disk",
		HotplugVolume: &kubevirtv1.HotplugVolumeStatus{AttachPodName: launcherpod.AttachmentPodName(vmi, name)}}
	bus := "scsi"
	if strings.HasPrefix(target, "vd") {
		bus = "virtio"
	}
	diskXML := fmt.Sprintf(`<disk type="file" device="disk"><target dev="%s" bus="%s"></target><alias name="ua-%s"></alias></disk>`, target, bus, name)
	if err := l.conn.DetachDisk(l.domain, []byte(diskXML)); err != nil {
		// Asked before and still in progress, or refused; the next sync asks again.
		klog.FromContext(ctx).V(2).Info("Unplugging a disk", "volume", name, "err", err)
		return st
	}
	h.takeBlock(ctx, l, name)
	h.report.event(vmi, corev1.EventTypeNormal, EventVolumeUnplugged, fmt.Sprintf("Volume %s unplugged from the guest", name))
	return st
}

func (h *hotplugger) failed(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, st *kubevirtv1.VolumeStatus, err error) {
	klog.FromContext(ctx).Info("Hotplugging a volume failed", "volume", st.Name, "err", err)
	st.Reason, st.Message = EventHotplugFailed, err.Error()
	h.report.event(vmi, corev1.EventTypeWarning, EventHotplugFailed, fmt.Sprintf("Volume %s: %v", st.Name, err))
}

// mergeHotplugStatus puts the hotplugger's volume statuses into the status's list: entries of
// hotplugged volumes are replaced, those of volumes being unplugged appended.
func mergeHotplugStatus(list []kubevirtv1.VolumeStatus, hot map[string]kubevirtv1.VolumeStatus) []kubevirtv1.VolumeStatus {
	if len(hot) == 0 {
		return list
	}
	seen := map[string]bool{}
	for i := range list {
		if s, ok := hot[list[i].Name]; ok {
			list[i] = s
			seen[s.Name] = true
		}
	}
	var rest []string
	for name := range hot {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	for _, name := range rest {
		list = append(list, hot[name])
	}
	return list
}
