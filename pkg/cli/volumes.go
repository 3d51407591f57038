package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// volumeTarget is where a volume request goes, as virtctl sends it: with --persist to the VM
// (its template keeps the volume), without to its running instance only.
func volumeTarget(persist bool) (resource, kind string) {
	if persist {
		return "virtualmachines", "VM"
	}
	return "virtualmachineinstances", "VMI"
}

// newAddVolumeCommand builds `addvolume NAME --volume-name=CLAIM [--persist] [--bus ...]
// [--serial ...] [--cache ...] [--dry-run]`, as virtctl's: the claim is plugged in as a disk
// of the volume's name.
func newAddVolumeCommand(o *options) *cobra.Command {
	var volume, bus, serial, cache string
	var persist, dryRun bool
	cmd := &cobra.Command{
		Use:   "addvolume NAME --volume-name=CLAIM",
		Short: "Hotplug a persistent volume claim into a running instance (or, with --persist, its VM)",
		Long: "Hotplug the DataVolume or claim named by --volume-name into the running instance NAME as a disk on the " +
			"scsi (default) or virtio bus. With --persist the VM NAME keeps the volume in its template, and " +
			"the running instance gets it from there; a halted VM gets it at its next start.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if volume == "" {
				return fmt.Errorf("--volume-name is required")
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			disk := &kubevirtv1.Disk{Name: volume, Serial: serial, Cache: kubevirtv1.DriverCache(cache),
				DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBus(bus)}}}
			// As virtctl: a DataVolume of that name is the source, else the claim.
			src := &kubevirtv1.HotplugVolumeSource{}
			isDV, err := c.dataVolumeExists(cmd.Context(), volume)
			switch {
			case err != nil:
				return fmt.Errorf("error looking up DataVolume %s: %w", volume, err)
			case isDV:
				src.DataVolume = &kubevirtv1.DataVolumeSource{Name: volume, Hotpluggable: true}
			default:
				src.PersistentVolumeClaim = &kubevirtv1.PersistentVolumeClaimVolumeSource{Hotpluggable: true,
					PersistentVolumeClaimVolumeSource: corev1.PersistentVolumeClaimVolumeSource{ClaimName: volume}}
			}
			body := &kubevirtv1.AddVolumeOptions{Name: volume, Disk: disk, DryRun: dryRunList(dryRun), VolumeSource: src}
			resource, kind := volumeTarget(persist)
			if err := c.put(cmd.Context(), resource, args[0], "addvolume", body); err != nil {
				return fmt.Errorf("error adding volume %s to %s %s: %w", volume, kind, args[0], err)
			}
			_, _ = fmt.Fprintf(o.streams.Out, "Successfully submitted add volume request to %s %s for volume %s%s\n",
				kind, args[0], volume, dryRunSuffix(dryRun))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&volume, "volume-name", "", "Name of the persistent volume claim to hotplug (also the volume's and disk's name).")
	f.BoolVar(&persist, "persist", false, "Add the volume to the VM's template, so that it stays after restarts.")
	f.StringVar(&bus, "bus", string(kubevirtv1.DiskBusSCSI), "Bus of the disk: scsi or virtio.")
	f.StringVar(&serial, "serial", "", "Serial number of the disk, as the guest sees it.")
	f.StringVar(&cache, "cache", "", "Cache mode of the disk: none, writethrough or writeback.")
	f.BoolVar(&dryRun, "dry-run", false, "Validate the request without acting on it.")
	return cmd
}

// newRemoveVolumeCommand builds `removevolume NAME --volume-name=VOLUME [--persist] [--dry-run]`.
func newRemoveVolumeCommand(o *options) *cobra.Command {
	var volume string
	var persist, dryRun bool
	cmd := &cobra.Command{
		Use:   "removevolume NAME --volume-name=VOLUME",
		Short: "Unplug a hotplugged volume from a running instance (or, with --persist, its VM)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if volume == "" {
				return fmt.Errorf("--volume-name is required")
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			body := &kubevirtv1.RemoveVolumeOptions{Name: volume, DryRun: dryRunList(dryRun)}
			resource, kind := volumeTarget(persist)
			if err := c.put(cmd.Context(), resource, args[0], "removevolume", body); err != nil {
				return fmt.Errorf("error removing volume %s from %s %s: %w", volume, kind, args[0], err)
			}
			_, _ = fmt.Fprintf(o.streams.Out, "Successfully submitted remove volume request to %s %s for volume %s%s\n",
				kind, args[0], volume, dryRunSuffix(dryRun))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&volume, "volume-name", "", "Name of the volume (or of its claim) to unplug.")
	f.BoolVar(&persist, "persist", false, "Remove the volume from the VM's template too.")
	f.BoolVar(&dryRun, "dry-run", false, "Validate the request without acting on it.")
	return cmd
}

func dryRunSuffix(dryRun bool) string {
	if dryRun {
		return " (dry run)"
	}
	return ""
}

// dataVolumeExists reports whether the namespace has a DataVolume of that name.
func (c *client) dataVolumeExists(ctx context.Context, name string) (bool, error) {
	err := c.rest.Get().AbsPath("/apis/cdi.kubevirt.io/v1beta1/namespaces", c.namespace, "datavolumes", name).Do(ctx).Error()
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, err
}
