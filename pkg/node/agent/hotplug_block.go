package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

// blockDevices gives a running launcher's container a hotplugged block device and takes it
// back. libvirt passes descriptors (fdgroup) only for file-backed disks, and QEMU's file driver
// refuses a block device, so a block claim cannot be handed over as an open file: the agent
// makes the device node in the launcher's /dev (never a mount) and allows the device in the
// container's device cgroup, as the kubelet does for a block claim the pod had from its start.
// The attachment pod, which the claim's owner could have run, proves the access.
type blockDevices interface {
	// give makes the node of the block device at attachDev (a path on the node) at
	// launcherRoot/dev/<name> and allows the device in the cgroup of the launcher's process
	// (launcherRoot is /proc/<pid>/root).
	give(attachDev, launcherRoot, name string) error
	// take removes launcherRoot/dev/<name> and denies its device to the launcher again
	// (descriptors QEMU already has stay open until the guest lets go of the disk).
	take(launcherRoot, name string) error
}

// errNoDeviceCgroup: the launcher's cgroup has no v1 devices controller (cgroup v2 filters
// devices with an eBPF program, which the agent does not rewrite).
var errNoDeviceCgroup = errors.New("plugging a block device into a running guest needs the cgroup v1 devices controller on the node")

// hostDevices is blockDevices on the node: the agent shares the host's PID namespace, so
// /proc/<pid>/root is a container's root.
type hostDevices struct {
	// cgroupRoot holds the node's cgroup v1 devices hierarchy at cgroupRoot/devices. When empty,
	// the agent mounts the hierarchy (its whole tree: its container's /sys/fs/cgroup shows only
	// its own cgroup) at devicesCgroupMount in its own mount namespace, once.
	cgroupRoot string
	mount      sync.Once
	mountErr   error
}

// devicesCgroupMount is where the agent mounts the devices hierarchy (under cgroupRoot/devices).
const devicesCgroupMount = "/run/nativevirt-handler-cgroup"

func (d *hostDevices) root() (string, error) {
	if d.cgroupRoot != "" {
		return d.cgroupRoot, nil
	}
	d.mount.Do(func() {
		dir := filepath.Join(devicesCgroupMount, "devices")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			d.mountErr = err
			return
		}
		if _, err := os.Stat(filepath.Join(dir, "devices.allow")); err == nil {
			return // mounted by an earlier agent process of this container
		}
		if err := unix.Mount("cgroup", dir, "cgroup", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "devices"); err != nil {
			d.mountErr = fmt.Errorf("mounting the devices cgroup hierarchy: %w (%w)", err, errNoDeviceCgroup)
		}
	})
	return devicesCgroupMount, d.mountErr
}

func (d *hostDevices) give(attachDev, launcherRoot, name string) error {
	var st unix.Stat_t
	if err := unix.Stat(attachDev, &st); err != nil {
		return fmt.Errorf("the claim's device: %w", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return fmt.Errorf("the claim's device %s is not a block device", attachDev)
	}
	if err := d.rule(launcherRoot, "devices.allow", st.Rdev); err != nil {
		return err
	}
	node := filepath.Join(launcherRoot, "dev", name)
	var have unix.Stat_t
	if err := unix.Stat(node, &have); err == nil {
		if have.Mode&unix.S_IFMT == unix.S_IFBLK && have.Rdev == st.Rdev {
			return nil
		}
		if err := os.Remove(node); err != nil {
			return fmt.Errorf("replacing %s: %w", node, err)
		}
	}
	if err := unix.Mknod(node, unix.S_IFBLK|0o660, int(st.Rdev)); err != nil {
		return fmt.Errorf("making the device node in the launcher: %w", err)
	}
	return nil
}

func (d *hostDevices) take(launcherRoot, name string) error {
	node := filepath.Join(launcherRoot, "dev", name)
	var st unix.Stat_t
	if err := unix.Stat(node, &st); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if err := os.Remove(node); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return nil
	}
	return d.rule(launcherRoot, "devices.deny", st.Rdev)
}

// rule writes "b MAJOR:MINOR rw" (allow) or "rwm" (deny) to the devices controller of the
// cgroup of the process whose root is root (/proc/<pid>/root: its cgroup file is beside).
func (d *hostDevices) rule(root, file string, rdev uint64) error {
	cgroupRoot, err := d.root()
	if err != nil {
		return err
	}
	rel, err := devicesCgroup(filepath.Join(filepath.Dir(root), "cgroup"))
	if err != nil {
		return err
	}
	access := "rw"
	if file == "devices.deny" {
		access = "rwm"
	}
	line := fmt.Sprintf("b %d:%d %s", unix.Major(rdev), unix.Minor(rdev), access)
	path := filepath.Join(cgroupRoot, "devices", rel, file)
	if err := os.WriteFile(path, []byte(line), 0); err != nil {
		return fmt.Errorf("%s in the launcher's device cgroup: %w", line, err)
	}
	return nil
}

// devicesCgroup is the process's cgroup path in the v1 devices hierarchy.
func devicesCgroup(cgroupFile string) (string, error) {
	f, err := os.Open(cgroupFile)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(s.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "devices" {
				return parts[2], nil
			}
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", errNoDeviceCgroup
}

// plugBlock attaches a block claim's device: its node in the launcher's /dev, allowed in the
// launcher's device cgroup.
func (h *hotplugger) plugBlock(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, l *launcher, v *kubevirtv1.Volume, disk *kubevirtv1.Disk,
	pod *corev1.Pod, inUse []string, st kubevirtv1.VolumeStatus) (kubevirtv1.VolumeStatus, bool) {
	err := h.giveBlock(l, v.Name, pod)
	var diskXML []byte
	if err == nil {
		diskXML, st.Target, err = convert.HotplugDisk(disk, true, inUse)
	}
	if err == nil {
		err = l.conn.AttachDisk(l.domain, diskXML, "", nil)
	}
	if err != nil {
		st.Target = ""
		h.failed(ctx, vmi, &st, err)
		return st, false
	}
	st.Phase, st.Reason, st.Message = kubevirtv1.HotplugVolumeMounted, "MountedToPod", "the block device is plugged into the guest"
	h.report.event(vmi, corev1.EventTypeNormal, EventVolumeHotplugged, fmt.Sprintf("Volume %s hotplugged into the guest", v.Name))
	return st, true
}

func (h *hotplugger) giveBlock(l *launcher, volume string, pod *corev1.Pod) error {
	if h.devices == nil {
		return errors.New("block devices cannot be given to launchers on this node")
	}
	attachRoot, err := h.containerRoot(pod.UID, launcherpod.HotplugDevice(volume))
	if err != nil {
		return err
	}
	launcherRoot, err := h.qemuRoot(l.podUID)
	if err != nil {
		return fmt.Errorf("the launcher's QEMU: %w", err)
	}
	return h.devices.give(filepath.Join(attachRoot, launcherpod.HotplugDevice(volume)), launcherRoot,
		filepath.Base(convert.HotplugBlockNode(volume)))
}

// takeBlock removes the device node of a volume being unplugged from the launcher, if it has
// one (a block volume).
func (h *hotplugger) takeBlock(ctx context.Context, l *launcher, volume string) {
	if h.devices == nil {
		return
	}
	launcherRoot, err := h.qemuRoot(l.podUID)
	if err == nil {
		err = h.devices.take(launcherRoot, filepath.Base(convert.HotplugBlockNode(volume)))
	}
	if err != nil {
		klog.FromContext(ctx).Info("Taking back a hotplugged block device", "volume", volume, "err", err)
	}
}

// qemuRoot is /proc/<pid>/root of the launcher pod's QEMU, whose container (and cgroup) is
// the one that opens the device.
func (h *hotplugger) qemuRoot(podUID types.UID) (string, error) {
	if h.processRoot == nil {
		return podfs.ProcRoots{}.ProcessRoot(podUID, qemuComm)
	}
	return h.processRoot(podUID, qemuComm)
}

// qemuComm starts the command name of QEMU (qemu-system-x86_64, cut to 15 characters).
const qemuComm = "qemu-system"
