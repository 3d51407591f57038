package agent

import (
	"testing"

	"github.com/nativevirt/nativevirt/pkg/launcherpod"
	"github.com/nativevirt/nativevirt/pkg/node/convert"
)

// TestConverterAndPodAgreeOnPaths: the domain points at the files the launcher pod puts into
// its disks volume (the copy containers, the launcher's config disks).
func TestConverterAndPodAgreeOnPaths(t *testing.T) {
	for _, tt := range []struct{ what, domain, pod string }{
		{"disks volume", convert.DefaultDisksDir, launcherpod.DisksDir},
		{"container disk", convert.VolumeImagePath(convert.DefaultDisksDir, "vol"), launcherpod.ContainerDiskPath("vol")},
		{"config disk", convert.ConfigISOPath(convert.DefaultDisksDir, "vol"), launcherpod.ConfigDiskPath("vol")},
		{"config volume (an ACPI table's secret)", convert.DefaultConfigDir + "/vol", launcherpod.ConfigVolumePath("vol")},
	} {
		if tt.domain != tt.pod {
			t.Errorf("%s: the domain uses %s, the pod writes %s", tt.what, tt.domain, tt.pod)
		}
	}
}
