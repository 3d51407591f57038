package convert

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// balloonStatsPeriod is how often (seconds) the balloon reports guest memory statistics.
const balloonStatsPeriod = 10

// convertDevices assembles the domain's devices from the per-device
// converters.
func convertDevices(vmi *kubevirtv1.VirtualMachineInstance, c Context, threads ioThreadPlan, vcpus uint32) (Devices, field.ErrorList) {
	devices := &vmi.Spec.Domain.Devices
	p := field.NewPath("spec", "domain", "devices")
	transitional := devices.UseVirtioTransitional != nil && *devices.UseVirtioTransitional
	errs := unsupportedDevices(devices, p)
	out := Devices{Emulator: c.Emulator}

	disks, buses, derrs := convertDisks(vmi, c, threads, vcpus)
	errs = append(errs, derrs...)
	out.Disks = disks

	inputs, inputUSB, ierrs := convertInputs(devices, p)
	errs = append(errs, ierrs...)
	out.Inputs = inputs
	// A virtio-scsi controller from the start lets SCSI disks be hotplugged, as KubeVirt has
	// one unless hotplug is disabled.
	buses.scsi = buses.scsi || !devices.DisableHotplug
	out.Controllers = controllers(buses, inputUSB, transitional)

	interfaces, nerrs := convertInterfaces(vmi, vcpus)
	errs = append(errs, nerrs...)
	out.Interfaces = interfaces

	out.Serials, out.Consoles = convertSerial(devices, c)
	out.Channels = guestAgentChannel()

	graphics, videos, gerrs := convertGraphics(devices, c, p)
	errs = append(errs, gerrs...)
	out.Graphics, out.Videos = graphics, videos

	watchdog, werrs := convertWatchdog(devices.Watchdog, p)
	errs = append(errs, werrs...)
	out.Watchdog = watchdog

	out.MemBalloon = memBalloon(devices, transitional)
	out.RNGs = convertRNG(devices, transitional)

	panics, perrs := convertPanics(devices.PanicDevices, p.Child("panicDevices"))
	errs = append(errs, perrs...)
	out.Panics = panics
	sounds, audios, serrs := convertSound(devices.Sound, p.Child("sound"))
	errs = append(errs, serrs...)
	out.Sounds, out.Audios = sounds, audios
	if t := devices.TPM; t != nil && enabled(t.Enabled) {
		// An emulated TPM 2.0 whose state lives as long as the pod, KubeVirt's default.
		out.TPM = &TPM{Model: "tpm-tis", Backend: TPMBackend{Type: "emulator", Version: "2.0"}}
	}
	out.Controllers = append(out.Controllers, rootPorts(vmi, &out)...)
	return out, errs
}

// controllers gives a virtio-scsi controller when SCSI disks exist (or may be hotplugged), and
// turns the default USB controller off when nothing uses USB (fewer devices
// for the guest to probe, as KubeVirt does).
func controllers(buses diskBuses, inputUSB, transitional bool) []Controller {
	var out []Controller
	if buses.scsi {
		model := "virtio-scsi"
		if transitional {
			model = "virtio-transitional"
		}
		out = append(out, Controller{Type: "scsi", Index: "0", Model: model})
	}
	if !buses.usb && !inputUSB {
		out = append(out, Controller{Type: "usb", Index: "0", Model: "none"})
	}
	return out
}

// memBalloon gives the virtio balloon (with statistics), or none when
// autoattachMemBalloon is false.
func memBalloon(devices *kubevirtv1.Devices, transitional bool) *MemBalloon {
	if !enabled(devices.AutoattachMemBalloon) {
		return &MemBalloon{Model: "none"}
	}
	model := "virtio"
	if transitional {
		model = "virtio-transitional"
	}
	return &MemBalloon{Model: model, Stats: &MemBalloonStats{Period: balloonStatsPeriod}}
}

// convertPanics gives the panic notifiers; the model defaults to isa.
func convertPanics(list []kubevirtv1.PanicDevice, p *field.Path) ([]Panic, field.ErrorList) {
	var (
		out  []Panic
		errs field.ErrorList
	)
	for i, d := range list {
		model := kubevirtv1.Isa
		if d.Model != nil {
			model = *d.Model
		}
		switch model {
		case kubevirtv1.Hyperv, kubevirtv1.Isa, kubevirtv1.Pvpanic:
			out = append(out, Panic{Model: string(model)})
		default:
			errs = append(errs, field.NotSupported(p.Index(i).Child("model"), model, []string{"hyperv", "isa", "pvpanic"}))
		}
	}
	return out, errs
}

// soundModels are the sound cards KubeVirt offers; ich9 is its default.
var soundModels = []string{"ich9", "ac97"}

// convertSound gives the sound card of devices.sound, on an audio backend that plays nothing.
func convertSound(s *kubevirtv1.SoundDevice, p *field.Path) ([]Sound, []Audio, field.ErrorList) {
	if s == nil {
		return nil, nil, nil
	}
	model := s.Model
	if model == "" {
		model = "ich9"
	}
	if model != "ich9" && model != "ac97" {
		return nil, nil, field.ErrorList{field.NotSupported(p.Child("model"), s.Model, soundModels)}
	}
	if s.Name == "" {
		return nil, nil, field.ErrorList{field.Required(p.Child("name"), "")}
	}
	return []Sound{{Model: model, Alias: &Alias{Name: "ua-" + s.Name}, Audio: &SoundAudio{ID: 1}}}, []Audio{{ID: 1, Type: "none"}}, nil
}

// unsupportedDevices refuses device families the converter does not
// implement (validation refuses most of them already).
func unsupportedDevices(d *kubevirtv1.Devices, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(set bool, name, what string) {
		if set {
			errs = append(errs, field.Forbidden(p.Child(name), what+" is not supported"))
		}
	}
	forbid(len(d.GPUs) > 0, "gpus", "GPU passthrough")
	forbid(len(d.HostDevices) > 0, "hostDevices", "host device passthrough")
	forbid(len(d.Filesystems) > 0, "filesystems", "virtiofs")
	forbid(d.TPM != nil && enabled(d.TPM.Enabled) && d.TPM.Persistent != nil && *d.TPM.Persistent, "tpm", "a persistent TPM")
	forbid(d.ClientPassthrough != nil, "clientPassthrough", "USB client passthrough")
	forbid(d.DownwardMetrics != nil, "downwardMetrics", "the downward metrics device")
	forbid(d.AutoattachVSOCK != nil && *d.AutoattachVSOCK, "autoattachVSOCK", "a VSOCK device (needs /dev/vhost-vsock in the launcher pod)")
	return errs
}
