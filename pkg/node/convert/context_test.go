package convert

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContextDefaults(t *testing.T) {
	got := Context{}.withDefaults()
	want := Context{
		RunDir:    "/var/run/nativevirt",
		DisksDir:  "/var/run/nativevirt-disks",
		PVCDir:    "/var/run/nativevirt-pvcs",
		ConfigDir: "/var/run/nativevirt-config",
		Emulator:  "/usr/bin/qemu-system-x86_64",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	kept := Context{RunDir: "/r", Emulation: true}.withDefaults()
	if kept.RunDir != "/r" || !kept.Emulation {
		t.Errorf("defaults overwrote set fields: %+v", kept)
	}
}

func TestContextValidate(t *testing.T) {
	tests := []struct {
		name    string
		ctx     Context
		wantErr string
	}{
		{name: "defaults", ctx: Context{}},
		{name: "relative run dir", ctx: Context{RunDir: "run"}, wantErr: "RunDir"},
		{name: "relative emulator", ctx: Context{Emulator: "qemu"}, wantErr: "Emulator"},
		{name: "unknown format", ctx: Context{DiskFormats: map[string]DiskFormat{"a": "vmdk"}}, wantErr: "vmdk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.ctx.withDefaults().validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	kernel, initrd := KernelBootPaths("/d")
	got := []string{
		VolumeImagePath("/d", "v"), CloudInitISOPath("/d", "ci"), ClaimPath("/p", "c"),
		kernel, initrd, VNCSocketPath("/r"), SerialLogPath("/r"), VolumeDir("/d", "v"), TapName(1),
	}
	want := []string{
		"/d/v/disk.img", "/d/ci/cloudinit.iso", "/p/c/disk.img",
		"/d/kernel-boot/kernel", "/d/kernel-boot/initrd", "/r/vnc.sock", "/r/serial.log", "/d/v", "tap1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
