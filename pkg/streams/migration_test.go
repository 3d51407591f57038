package streams

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMigrationPathRoundTrip(t *testing.T) {
	for _, c := range MigrationChannels {
		want := MigrationTarget{UID: "0d3f5a4e-7b21-4c39-9a55-2f1e6c8b9d01", Channel: c}
		if !IsMigrationPath(want.Path()) {
			t.Errorf("IsMigrationPath(%q) = false", want.Path())
		}
		got, err := ParseMigrationPath(want.Path())
		if err != nil {
			t.Fatalf("ParseMigrationPath(%q): %v", want.Path(), err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round trip of %q (-want +got):\n%s", c, diff)
		}
	}
}

func TestParseMigrationPath(t *testing.T) {
	for _, p := range []string{
		"/v1/migrations/uid-1/vnc",
		"/v1/migrations/uid-1",
		"/v1/migrations/uid-1/qemu/extra",
		"/v1/migrations/../qemu",
		"/v1/migrations/UID_1/qemu",
		"/v1/migrations//nbd",
		"/v1/namespaces/default/virtualmachineinstances/vm/console",
		"",
	} {
		if got, err := ParseMigrationPath(p); err == nil {
			t.Errorf("ParseMigrationPath(%q) = %+v, want an error", p, got)
		}
	}
	if IsMigrationPath("/v1/namespaces/default/virtualmachineinstances/vm/console") {
		t.Error("a VMI path is taken for a migration path")
	}
}

func TestMigrationTargetURL(t *testing.T) {
	got := MigrationTarget{UID: "uid-1", Channel: ChannelNBD}.URL("10.0.0.2:8186")
	if want := "https://10.0.0.2:8186/v1/migrations/uid-1/nbd"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if got := ChannelLibvirt.Socket(); got != "libvirt.sock" {
		t.Errorf("socket = %q, want libvirt.sock", got)
	}
}
