package convert

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// Convert turns vmi into the libvirt domain that runs it. The instance is
// read, never changed. An instance the converter cannot honour yields an
// error listing every offending field; a bad Context is the caller's error.
func Convert(vmi *kubevirtv1.VirtualMachineInstance, c Context) (*Domain, error) {
	if vmi == nil {
		return nil, fmt.Errorf("convert: nil VirtualMachineInstance")
	}
	c = c.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	if vmi.Namespace == "" || vmi.Name == "" {
		return nil, fmt.Errorf("convert: the VirtualMachineInstance needs a namespace and a name")
	}
	d, errs := convert(vmi, c)
	if len(errs) > 0 {
		return nil, fmt.Errorf("convert VirtualMachineInstance %s/%s: %w", vmi.Namespace, vmi.Name, errs.ToAggregate())
	}
	return d, nil
}

// convert runs the per-device converters and collects all their errors.
func convert(vmi *kubevirtv1.VirtualMachineInstance, c Context) (*Domain, field.ErrorList) {
	spec := &vmi.Spec.Domain
	p := field.NewPath("spec", "domain")
	var errs field.ErrorList
	collect := func(e field.ErrorList) { errs = append(errs, e...) }

	d := &Domain{
		Type:       "kvm",
		Name:       DomainName(vmi.Namespace, vmi.Name),
		Metadata:   instanceMetadata(vmi),
		OnPoweroff: "destroy",
		OnReboot:   "restart",
		OnCrash:    "destroy",
	}
	if c.Emulation {
		d.Type = "qemu"
	}
	collect(unsupportedSpec(vmi))

	vcpu, cpu, e := convertCPU(spec, c.Emulation, p)
	collect(e)
	d.VCPU, d.CPU = vcpu, cpu
	vcpus := uint32(1)
	if vcpu != nil {
		vcpus = vcpu.Count
	}

	mem, e := convertMemory(spec, p)
	collect(e)
	d.Memory = mem

	uuid, sysinfo, e := convertSysInfo(spec, p)
	collect(e)
	d.UUID, d.SysInfo = uuid, sysinfo

	os, e := convertOS(vmi, c, enabled(spec.Devices.AutoattachSerialConsole), p)
	collect(e)
	d.OS = os

	features, e := convertFeatures(spec, p)
	collect(e)
	if c.Emulation {
		features.TCG = tcgFeatures()
	}
	d.Features = features

	clock, e := convertClock(spec, p)
	collect(e)
	d.Clock = clock

	threads, e := planIOThreads(spec, vcpus, p)
	collect(e)
	d.IOThreads = threads.count

	devices, e := convertDevices(vmi, c, threads, vcpus)
	collect(e)
	d.Devices = devices
	return d, errs
}

// unsupportedSpec refuses instance-level features the node side does not
// implement (validation refuses them too; the converter must not rely on it).
func unsupportedSpec(vmi *kubevirtv1.VirtualMachineInstance) field.ErrorList {
	spec := &vmi.Spec
	p := field.NewPath("spec")
	var errs field.ErrorList
	if spec.Domain.LaunchSecurity != nil {
		errs = append(errs, field.Forbidden(p.Child("domain", "launchSecurity"), "confidential computing is not supported"))
	}
	return errs
}
