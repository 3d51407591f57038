package convert

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

var devicesPath = field.NewPath("spec", "domain", "devices")

func TestConvertGraphics(t *testing.T) {
	tests := []struct {
		name         string
		devices      kubevirtv1.Devices
		wantGraphics []Graphics
		wantVideos   []Video
		wantErr      string
	}{{
		name:         "default: VNC on the run directory's socket, VGA",
		wantGraphics: []Graphics{{Type: "vnc", Listen: &GraphicsListen{Type: "socket", Socket: "/run/nv/vnc.sock"}}},
		wantVideos:   []Video{{Model: VideoModel{Type: "vga", Heads: 1}}},
	}, {
		name:         "virtio video",
		devices:      kubevirtv1.Devices{Video: &kubevirtv1.VideoDevice{Type: "virtio"}},
		wantGraphics: []Graphics{{Type: "vnc", Listen: &GraphicsListen{Type: "socket", Socket: "/run/nv/vnc.sock"}}},
		wantVideos:   []Video{{Model: VideoModel{Type: "virtio", Heads: 1}}},
	}, {
		name:       "no graphics: no display, no video card",
		devices:    kubevirtv1.Devices{AutoattachGraphicsDevice: ptr(false)},
		wantVideos: []Video{{Model: VideoModel{Type: "none"}}},
	}, {
		name:    "unknown video",
		devices: kubevirtv1.Devices{Video: &kubevirtv1.VideoDevice{Type: "qxl"}},
		wantErr: "spec.domain.devices.video.type",
	}, {
		name:    "video without graphics",
		devices: kubevirtv1.Devices{AutoattachGraphicsDevice: ptr(false), Video: &kubevirtv1.VideoDevice{Type: "vga"}},
		wantErr: "spec.domain.devices.video",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, v, errs := convertGraphics(&tc.devices, Context{RunDir: "/run/nv"}, devicesPath)
			checkErrs(t, errs, tc.wantErr)
			if tc.wantErr != "" {
				return
			}
			if diff := cmp.Diff(tc.wantGraphics, g); diff != "" {
				t.Errorf("graphics (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantVideos, v); diff != "" {
				t.Errorf("videos (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertSerial(t *testing.T) {
	port := uint32(0)
	tests := []struct {
		name        string
		devices     kubevirtv1.Devices
		wantSerial  []Serial
		wantConsole []Console
	}{{
		name:        "default: pty with a log, console on it",
		wantSerial:  []Serial{{Type: "pty", Target: &SerialTarget{Port: &port}, Log: &SerialLog{File: "/run/nv/serial.log", Append: "on"}}},
		wantConsole: []Console{{Type: "pty", Target: &ConsoleTarget{Type: "serial", Port: &port}}},
	}, {
		name:    "turned off",
		devices: kubevirtv1.Devices{AutoattachSerialConsole: ptr(false)},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, c := convertSerial(&tc.devices, Context{RunDir: "/run/nv"})
			if diff := cmp.Diff(tc.wantSerial, s); diff != "" {
				t.Errorf("serial (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConsole, c); diff != "" {
				t.Errorf("console (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertInputs(t *testing.T) {
	tests := []struct {
		name    string
		devices kubevirtv1.Devices
		want    []Input
		wantUSB bool
		wantErr string
	}{
		{name: "none"},
		{
			name:    "autoattach adds a USB tablet",
			devices: kubevirtv1.Devices{AutoattachInputDevice: ptr(true)},
			want:    []Input{{Type: "tablet", Bus: "usb", Alias: &Alias{Name: "ua-default-0"}}},
			wantUSB: true,
		},
		{
			name: "listed inputs, defaults filled",
			devices: kubevirtv1.Devices{AutoattachInputDevice: ptr(true), Inputs: []kubevirtv1.Input{
				{Name: "kbd", Type: "keyboard", Bus: "virtio"}, {Name: "t"},
			}},
			want:    []Input{{Type: "keyboard", Bus: "virtio", Alias: &Alias{Name: "ua-kbd"}}, {Type: "tablet", Bus: "usb", Alias: &Alias{Name: "ua-t"}}},
			wantUSB: true,
		},
		{
			name:    "virtio only: no USB",
			devices: kubevirtv1.Devices{Inputs: []kubevirtv1.Input{{Name: "t", Type: "tablet", Bus: "virtio"}}},
			want:    []Input{{Type: "tablet", Bus: "virtio", Alias: &Alias{Name: "ua-t"}}},
		},
		{name: "bad bus", devices: kubevirtv1.Devices{Inputs: []kubevirtv1.Input{{Name: "t", Bus: "ps2"}}}, wantErr: "inputs[0].bus"},
		{name: "bad type", devices: kubevirtv1.Devices{Inputs: []kubevirtv1.Input{{Name: "t", Type: "mouse"}}}, wantErr: "inputs[0].type"},
		{name: "no name", devices: kubevirtv1.Devices{Inputs: []kubevirtv1.Input{{}}}, wantErr: "inputs[0].name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, usb, errs := convertInputs(&tc.devices, devicesPath)
			checkErrs(t, errs, tc.wantErr)
			if tc.wantErr != "" {
				return
			}
			if usb != tc.wantUSB {
				t.Errorf("usb = %v, want %v", usb, tc.wantUSB)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConvertRNG(t *testing.T) {
	if got := convertRNG(&kubevirtv1.Devices{}, false); got != nil {
		t.Errorf("no rng asked, got %v", got)
	}
	want := []RNG{{Model: "virtio-transitional", Backend: RNGBackend{Model: "random", Source: "/dev/urandom"}}}
	if diff := cmp.Diff(want, convertRNG(&kubevirtv1.Devices{Rng: &kubevirtv1.Rng{}}, true)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestConvertWatchdog(t *testing.T) {
	tests := []struct {
		name    string
		w       *kubevirtv1.Watchdog
		want    *Watchdog
		wantErr string
	}{
		{name: "none"},
		{
			name: "default action reset",
			w:    &kubevirtv1.Watchdog{Name: "wd", WatchdogDevice: kubevirtv1.WatchdogDevice{I6300ESB: &kubevirtv1.I6300ESBWatchdog{}}},
			want: &Watchdog{Model: "i6300esb", Action: "reset", Alias: &Alias{Name: "ua-wd"}},
		},
		{
			name: "shutdown",
			w:    &kubevirtv1.Watchdog{Name: "wd", WatchdogDevice: kubevirtv1.WatchdogDevice{I6300ESB: &kubevirtv1.I6300ESBWatchdog{Action: "shutdown"}}},
			want: &Watchdog{Model: "i6300esb", Action: "shutdown", Alias: &Alias{Name: "ua-wd"}},
		},
		{name: "diag288", w: &kubevirtv1.Watchdog{Name: "wd", WatchdogDevice: kubevirtv1.WatchdogDevice{Diag288: &kubevirtv1.Diag288Watchdog{}}}, wantErr: "diag288"},
		{name: "no model", w: &kubevirtv1.Watchdog{Name: "wd"}, wantErr: "watchdog.i6300esb"},
		{
			name:    "bad action",
			w:       &kubevirtv1.Watchdog{Name: "wd", WatchdogDevice: kubevirtv1.WatchdogDevice{I6300ESB: &kubevirtv1.I6300ESBWatchdog{Action: "explode"}}},
			wantErr: "watchdog.i6300esb.action",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := convertWatchdog(tc.w, devicesPath)
			checkErrs(t, errs, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); tc.wantErr == "" && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestControllersBalloonPanics(t *testing.T) {
	if diff := cmp.Diff([]Controller{{Type: "usb", Index: "0", Model: "none"}}, controllers(diskBuses{}, false, false)); diff != "" {
		t.Errorf("no USB user (-want +got):\n%s", diff)
	}
	if got := controllers(diskBuses{}, true, false); got != nil {
		t.Errorf("USB input: got %v, want the default USB controller", got)
	}
	if diff := cmp.Diff([]Controller{{Type: "scsi", Index: "0", Model: "virtio-transitional"}}, controllers(diskBuses{scsi: true, usb: true}, false, true)); diff != "" {
		t.Errorf("SCSI (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&MemBalloon{Model: "virtio", Stats: &MemBalloonStats{Period: 10}}, memBalloon(&kubevirtv1.Devices{}, false)); diff != "" {
		t.Errorf("balloon (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&MemBalloon{Model: "none"}, memBalloon(&kubevirtv1.Devices{AutoattachMemBalloon: ptr(false)}, false)); diff != "" {
		t.Errorf("no balloon (-want +got):\n%s", diff)
	}
	pvpanic, bad := kubevirtv1.Pvpanic, kubevirtv1.PanicDeviceModel("s390")
	got, errs := convertPanics([]kubevirtv1.PanicDevice{{}, {Model: &pvpanic}}, devicesPath.Child("panicDevices"))
	checkErrs(t, errs, "")
	if diff := cmp.Diff([]Panic{{Model: "isa"}, {Model: "pvpanic"}}, got); diff != "" {
		t.Errorf("panics (-want +got):\n%s", diff)
	}
	_, errs = convertPanics([]kubevirtv1.PanicDevice{{Model: &bad}}, devicesPath.Child("panicDevices"))
	checkErrs(t, errs, "panicDevices[0].model")
}

func TestUnsupportedDevices(t *testing.T) {
	tests := []struct {
		name    string
		devices kubevirtv1.Devices
		wantErr string
	}{
		{name: "nothing"},
		{name: "disabled TPM is fine", devices: kubevirtv1.Devices{TPM: &kubevirtv1.TPMDevice{Enabled: ptr(false)}}},
		{name: "persistent TPM", devices: kubevirtv1.Devices{TPM: &kubevirtv1.TPMDevice{Persistent: ptr(true)}}, wantErr: "devices.tpm"},
		{name: "GPU", devices: kubevirtv1.Devices{GPUs: []kubevirtv1.GPU{{Name: "g"}}}, wantErr: "devices.gpus"},
		{name: "host device", devices: kubevirtv1.Devices{HostDevices: []kubevirtv1.HostDevice{{Name: "h"}}}, wantErr: "devices.hostDevices"},
		{name: "virtiofs", devices: kubevirtv1.Devices{Filesystems: []kubevirtv1.Filesystem{{Name: "f"}}}, wantErr: "devices.filesystems"},
		{name: "USB redirection", devices: kubevirtv1.Devices{ClientPassthrough: &kubevirtv1.ClientPassthroughDevices{}}, wantErr: "devices.clientPassthrough"},
		{name: "downward metrics", devices: kubevirtv1.Devices{DownwardMetrics: &kubevirtv1.DownwardMetrics{}}, wantErr: "devices.downwardMetrics"},
		{name: "VSOCK", devices: kubevirtv1.Devices{AutoattachVSOCK: ptr(true)}, wantErr: "devices.autoattachVSOCK"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, unsupportedDevices(&tc.devices, devicesPath), tc.wantErr)
		})
	}
}

// TestConvertTPM: devices.tpm is an emulated TPM 2.0 on the TIS interface (KubeVirt's), its
// state kept for the life of the pod; enabled: false is none.
func TestConvertTPM(t *testing.T) {
	for _, tc := range []struct {
		name string
		tpm  *kubevirtv1.TPMDevice
		want *TPM
	}{
		{"none", nil, nil},
		{"tpm: {}", &kubevirtv1.TPMDevice{}, &TPM{Model: "tpm-tis", Backend: TPMBackend{Type: "emulator", Version: "2.0"}}},
		{"turned off", &kubevirtv1.TPMDevice{Enabled: ptr(false)}, nil},
	} {
		vmi := minimalVMI()
		vmi.Spec.Domain.Devices.TPM = tc.tpm
		d, err := Convert(vmi, Context{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, d.Devices.TPM); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestConvertSound: devices.sound is KubeVirt's ich9 (default) or ac97 card, on an audio
// backend that plays nothing; other models and a missing name are refused, naming the field.
func TestConvertSound(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sound   *kubevirtv1.SoundDevice
		want    []Sound
		wantErr string
	}{
		{name: "default model", sound: &kubevirtv1.SoundDevice{Name: "audio"},
			want: []Sound{{Model: "ich9", Alias: &Alias{Name: "ua-audio"}, Audio: &SoundAudio{ID: 1}}}},
		{name: "ac97", sound: &kubevirtv1.SoundDevice{Name: "a", Model: "ac97"},
			want: []Sound{{Model: "ac97", Alias: &Alias{Name: "ua-a"}, Audio: &SoundAudio{ID: 1}}}},
		{name: "unknown model", sound: &kubevirtv1.SoundDevice{Name: "s", Model: "sb16"}, wantErr: "spec.domain.devices.sound.model"},
		{name: "no name", sound: &kubevirtv1.SoundDevice{}, wantErr: "spec.domain.devices.sound.name"},
	} {
		vmi := minimalVMI()
		vmi.Spec.Domain.Devices.Sound = tc.sound
		d, err := Convert(vmi, Context{})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, d.Devices.Sounds); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff([]Audio{{ID: 1, Type: "none"}}, d.Devices.Audios); diff != "" {
			t.Errorf("%s: audio (-want +got):\n%s", tc.name, diff)
		}
	}
}
