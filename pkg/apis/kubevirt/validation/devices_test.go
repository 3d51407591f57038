package validation

import (
	"testing"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

func TestValidateOtherDevices(t *testing.T) {
	devices := func(mutate func(d *kubevirtv1.Devices)) func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		return func(s *kubevirtv1.VirtualMachineInstanceSpec) { mutate(&s.Domain.Devices) }
	}
	runSpecCases(t, []specCase{
		{"inputs", devices(func(d *kubevirtv1.Devices) {
			d.Inputs = []kubevirtv1.Input{{Name: "tablet", Bus: "usb", Type: "tablet"}, {Name: "kbd", Bus: "virtio", Type: "keyboard"}}
		}), nil},
		{"bad inputs", devices(func(d *kubevirtv1.Devices) {
			d.Inputs = []kubevirtv1.Input{{Name: "", Bus: "ps2", Type: "mouse"}, {Name: "a"}, {Name: "a"}}
		}), []string{"Required:spec.domain.devices.inputs[0].name", "NotSupported:spec.domain.devices.inputs[0].bus",
			"NotSupported:spec.domain.devices.inputs[0].type", "Duplicate:spec.domain.devices.inputs[2].name"}},
		{"sound and a TPM", devices(func(d *kubevirtv1.Devices) {
			d.Sound = &kubevirtv1.SoundDevice{Name: "audio", Model: "ac97"}
			d.TPM = &kubevirtv1.TPMDevice{}
		}), nil},
		{"sound without name, of an unknown model", devices(func(d *kubevirtv1.Devices) {
			d.Sound = &kubevirtv1.SoundDevice{Model: "sb16"}
		}), []string{"Required:spec.domain.devices.sound.name", "NotSupported:spec.domain.devices.sound.model"}},
		{"watchdog", devices(func(d *kubevirtv1.Devices) {
			d.Watchdog = &kubevirtv1.Watchdog{Name: "wd", WatchdogDevice: kubevirtv1.WatchdogDevice{
				I6300ESB: &kubevirtv1.I6300ESBWatchdog{Action: kubevirtv1.WatchdogActionPoweroff}}}
		}), nil},
		{"watchdog without name or model", devices(func(d *kubevirtv1.Devices) {
			d.Watchdog = &kubevirtv1.Watchdog{}
		}), []string{"Required:spec.domain.devices.watchdog.name", "Required:spec.domain.devices.watchdog.i6300esb"}},
		{"s390x watchdog", devices(func(d *kubevirtv1.Devices) {
			d.Watchdog = &kubevirtv1.Watchdog{Name: "wd", WatchdogDevice: kubevirtv1.WatchdogDevice{Diag288: &kubevirtv1.Diag288Watchdog{}}}
		}), []string{"NotSupported:spec.domain.devices.watchdog.diag288"}},
		{"watchdog action", devices(func(d *kubevirtv1.Devices) {
			d.Watchdog = &kubevirtv1.Watchdog{Name: "wd", WatchdogDevice: kubevirtv1.WatchdogDevice{
				I6300ESB: &kubevirtv1.I6300ESBWatchdog{Action: "explode"}}}
		}), []string{"NotSupported:spec.domain.devices.watchdog.i6300esb.action"}},
		{"panic devices", devices(func(d *kubevirtv1.Devices) {
			d.PanicDevices = []kubevirtv1.PanicDevice{{Model: ptr(kubevirtv1.Pvpanic)}, {}}
		}), nil},
		{"bad panic device", devices(func(d *kubevirtv1.Devices) {
			d.PanicDevices = []kubevirtv1.PanicDevice{{Model: ptr(kubevirtv1.PanicDeviceModel("s390"))}}
		}), []string{"NotSupported:spec.domain.devices.panicDevices[0].model"}},
		{"tpm switched off is not a TPM", devices(func(d *kubevirtv1.Devices) {
			d.TPM = &kubevirtv1.TPMDevice{Enabled: ptr(false)}
		}), nil},
		{"rng, video and autoattach flags", devices(func(d *kubevirtv1.Devices) {
			d.Rng = &kubevirtv1.Rng{}
			d.Video = &kubevirtv1.VideoDevice{Type: "virtio"}
			d.AutoattachGraphicsDevice = ptr(false)
			d.AutoattachSerialConsole = ptr(true)
		}), nil},
	})
}
