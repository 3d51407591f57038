package app

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestCPUAllocationRatio: --cpu-allocation-ratio is 10 by default, refused below 1, and reaches
// the launcher pod configuration (and so the migration controller's).
func TestCPUAllocationRatio(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    int
		wantErr bool
	}{
		{name: "default", want: 10},
		{name: "one", args: []string{"--cpu-allocation-ratio=1"}, want: 1},
		{name: "twenty", args: []string{"--cpu-allocation-ratio=20"}, want: 20},
		{name: "zero is refused", args: []string{"--cpu-allocation-ratio=0"}, wantErr: true},
		{name: "negative is refused", args: []string{"--cpu-allocation-ratio=-3"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "--cpu-allocation-ratio must be at least 1") {
					t.Fatalf("Validate() = %v, want the ratio refused", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			c, err := (&Config{Launcher: o.launcherConfig()}).Complete()
			if err != nil {
				t.Fatal(err)
			}
			if c.Launcher.CPUAllocationRatio != tc.want || c.Migration.Launcher.CPUAllocationRatio != tc.want {
				t.Errorf("ratio %d (migration %d), want %d", c.Launcher.CPUAllocationRatio, c.Migration.Launcher.CPUAllocationRatio, tc.want)
			}
		})
	}
}
