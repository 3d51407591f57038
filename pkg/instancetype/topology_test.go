package instancetype

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1beta1 "github.com/nativevirt/nativevirt/pkg/apis/instancetype/v1beta1"
)

func topologyPref(t v1beta1.PreferredCPUTopology) *v1beta1.VirtualMachinePreferenceSpec {
	return &v1beta1.VirtualMachinePreferenceSpec{CPU: &v1beta1.CPUPreferences{PreferredCPUTopology: &t}}
}

func spreadPref(across *v1beta1.SpreadAcross, ratio *int32) *v1beta1.VirtualMachinePreferenceSpec {
	p := topologyPref(v1beta1.Spread)
	p.CPU.SpreadOptions = &v1beta1.SpreadOptions{Across: across, Ratio: ratio}
	return p
}

func TestPreferredTopology(t *testing.T) {
	for _, tc := range []struct {
		name string
		pref *v1beta1.VirtualMachinePreferenceSpec
		want v1beta1.PreferredCPUTopology
	}{
		{"no preference", nil, v1beta1.Sockets},
		{"no cpu preferences", &v1beta1.VirtualMachinePreferenceSpec{}, v1beta1.Sockets},
		{"no topology", &v1beta1.VirtualMachinePreferenceSpec{CPU: &v1beta1.CPUPreferences{}}, v1beta1.Sockets},
		{"sockets", topologyPref(v1beta1.Sockets), v1beta1.Sockets},
		{"cores", topologyPref(v1beta1.Cores), v1beta1.Cores},
		{"threads", topologyPref(v1beta1.Threads), v1beta1.Threads},
		{"spread", topologyPref(v1beta1.Spread), v1beta1.Spread},
		{"any", topologyPref(v1beta1.Any), v1beta1.Any},
		{"preferSockets", topologyPref(v1beta1.DeprecatedPreferSockets), v1beta1.Sockets},
		{"preferCores", topologyPref(v1beta1.DeprecatedPreferCores), v1beta1.Cores},
		{"preferThreads", topologyPref(v1beta1.DeprecatedPreferThreads), v1beta1.Threads},
		{"preferSpread", topologyPref(v1beta1.DeprecatedPreferSpread), v1beta1.Spread},
		{"preferAny", topologyPref(v1beta1.DeprecatedPreferAny), v1beta1.Any},
		{"unknown kept", topologyPref("diagonal"), "diagonal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PreferredTopology(tc.pref); got != tc.want {
				t.Errorf("PreferredTopology = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSpreadOptions(t *testing.T) {
	deprecated := func(ratio int32, p *v1beta1.VirtualMachinePreferenceSpec) *v1beta1.VirtualMachinePreferenceSpec {
		p.PreferSpreadSocketToCoreRatio = ratio
		return p
	}
	for _, tc := range []struct {
		name       string
		pref       *v1beta1.VirtualMachinePreferenceSpec
		wantRatio  int32
		wantAcross v1beta1.SpreadAcross
	}{
		{"no preference", nil, 2, v1beta1.SpreadAcrossSocketsCores},
		{"no options", topologyPref(v1beta1.Spread), 2, v1beta1.SpreadAcrossSocketsCores},
		{"deprecated ratio", deprecated(3, topologyPref(v1beta1.Spread)), 3, v1beta1.SpreadAcrossSocketsCores},
		{"options ratio wins over deprecated", deprecated(3, spreadPref(nil, new(int32(4)))), 4, v1beta1.SpreadAcrossSocketsCores},
		{"deprecated ratio with options without ratio", deprecated(3, spreadPref(new(v1beta1.SpreadAcrossCoresThreads), nil)), 3, v1beta1.SpreadAcrossCoresThreads},
		{"across", spreadPref(new(v1beta1.SpreadAcrossSocketsCoresThreads), nil), 2, v1beta1.SpreadAcrossSocketsCoresThreads},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ratio, across := SpreadOptions(tc.pref)
			if ratio != tc.wantRatio || across != tc.wantAcross {
				t.Errorf("SpreadOptions = %d, %q; want %d, %q", ratio, across, tc.wantRatio, tc.wantAcross)
			}
		})
	}
}

func TestTopology(t *testing.T) {
	type topo struct{ sockets, cores, threads int32 }
	for _, tc := range []struct {
		name    string
		guest   int32
		pref    *v1beta1.VirtualMachinePreferenceSpec
		want    topo
		wantErr *field.Error
	}{
		{name: "sockets by default", guest: 4, want: topo{4, 1, 1}},
		{name: "sockets without topology", guest: 4, pref: &v1beta1.VirtualMachinePreferenceSpec{}, want: topo{4, 1, 1}},
		{name: "one vCPU", guest: 1, pref: topologyPref(v1beta1.Cores), want: topo{1, 1, 1}},
		{name: "sockets", guest: 3, pref: topologyPref(v1beta1.Sockets), want: topo{3, 1, 1}},
		{name: "cores", guest: 3, pref: topologyPref(v1beta1.Cores), want: topo{1, 3, 1}},
		{name: "threads", guest: 3, pref: topologyPref(v1beta1.Threads), want: topo{1, 1, 3}},
		{name: "any lays out as sockets", guest: 3, pref: topologyPref(v1beta1.Any), want: topo{3, 1, 1}},
		{name: "preferSockets", guest: 3, pref: topologyPref(v1beta1.DeprecatedPreferSockets), want: topo{3, 1, 1}},
		{name: "preferCores", guest: 3, pref: topologyPref(v1beta1.DeprecatedPreferCores), want: topo{1, 3, 1}},
		{name: "preferThreads", guest: 3, pref: topologyPref(v1beta1.DeprecatedPreferThreads), want: topo{1, 1, 3}},
		{name: "preferAny", guest: 3, pref: topologyPref(v1beta1.DeprecatedPreferAny), want: topo{3, 1, 1}},
		{name: "spread default ratio across sockets and cores", guest: 6, pref: topologyPref(v1beta1.Spread), want: topo{3, 2, 1}},
		{name: "preferSpread", guest: 6, pref: topologyPref(v1beta1.DeprecatedPreferSpread), want: topo{3, 2, 1}},
		{name: "spread ratio 3", guest: 12, pref: spreadPref(nil, new(int32(3))), want: topo{4, 3, 1}},
		{name: "spread deprecated ratio", guest: 12, pref: func() *v1beta1.VirtualMachinePreferenceSpec {
			p := topologyPref(v1beta1.Spread)
			p.PreferSpreadSocketToCoreRatio = 4
			return p
		}(), want: topo{3, 4, 1}},
		{name: "spread across cores and threads", guest: 6, pref: spreadPref(new(v1beta1.SpreadAcrossCoresThreads), nil), want: topo{1, 3, 2}},
		{name: "spread across sockets, cores and threads", guest: 16, pref: spreadPref(new(v1beta1.SpreadAcrossSocketsCoresThreads), new(int32(4))), want: topo{2, 4, 2}},
		{name: "spread ratio 1 keeps one vCPU", guest: 1, pref: spreadPref(nil, new(int32(1))), want: topo{1, 1, 1}},
		{
			name: "spread not divisible across sockets and cores", guest: 3, pref: topologyPref(v1beta1.Spread),
			wantErr: field.Invalid(field.NewPath("instancetype", "spec", "cpu", "guest"), int32(3),
				"3 vCPUs provided by the instance type are not divisible by the Spec.PreferSpreadSocketToCoreRatio or "+
					"Spec.CPU.PreferSpreadOptions.Ratio of 2 provided by the preference"),
		},
		{
			name: "spread refuses one vCPU with ratio 2", guest: 1, pref: topologyPref(v1beta1.DeprecatedPreferSpread),
			wantErr: field.Invalid(field.NewPath("instancetype", "spec", "cpu", "guest"), int32(1),
				"1 vCPUs provided by the instance type are not divisible by the Spec.PreferSpreadSocketToCoreRatio or "+
					"Spec.CPU.PreferSpreadOptions.Ratio of 2 provided by the preference"),
		},
		{
			name: "spread not divisible across cores and threads", guest: 5, pref: spreadPref(new(v1beta1.SpreadAcrossCoresThreads), nil),
			wantErr: field.Invalid(field.NewPath("instancetype", "spec", "cpu", "guest"), int32(5),
				"5 vCPUs provided by the instance type are not divisible by the number of threads per core 2"),
		},
		{
			name: "spread not divisible by threads per core", guest: 6, pref: spreadPref(new(v1beta1.SpreadAcrossSocketsCoresThreads), new(int32(2))),
			wantErr: field.Invalid(field.NewPath("instancetype", "spec", "cpu", "guest"), int32(6),
				"6 vCPUs provided by the instance type are not divisible by the number of threads per core 2 and "+
					"Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of 2"),
		},
		{
			name: "spread odd count across sockets, cores and threads", guest: 7, pref: spreadPref(new(v1beta1.SpreadAcrossSocketsCoresThreads), new(int32(1))),
			wantErr: field.Invalid(field.NewPath("instancetype", "spec", "cpu", "guest"), int32(7),
				"7 vCPUs provided by the instance type are not divisible by the number of threads per core 2 and "+
					"Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of 1"),
		},
		{
			name: "spread ratio 0", guest: 4, pref: spreadPref(nil, new(int32(0))),
			wantErr: field.Invalid(field.NewPath("preference", "spec", "cpu", "spreadOptions", "ratio"), int32(0), "must be at least 1"),
		},
		{
			name: "spread negative deprecated ratio", guest: 4, pref: func() *v1beta1.VirtualMachinePreferenceSpec {
				p := topologyPref(v1beta1.Spread)
				p.PreferSpreadSocketToCoreRatio = -2
				return p
			}(),
			wantErr: field.Invalid(field.NewPath("preference", "spec", "preferSpreadSocketToCoreRatio"), int32(-2), "must be at least 1"),
		},
		{
			name: "unknown spread level", guest: 4, pref: spreadPref(new(v1beta1.SpreadAcross("Dies")), nil),
			wantErr: field.NotSupported(field.NewPath("preference", "spec", "cpu", "spreadOptions", "across"), v1beta1.SpreadAcross("Dies"), supportedSpreadAcross),
		},
		{
			name: "unknown topology", guest: 4, pref: topologyPref("diagonal"),
			wantErr: field.NotSupported(field.NewPath("preference", "spec", "cpu", "preferredCPUTopology"), v1beta1.PreferredCPUTopology("diagonal"), supportedTopologies),
		},
		{
			name: "no vCPUs", guest: 0,
			wantErr: field.Invalid(field.NewPath("instancetype", "spec", "cpu", "guest"), int32(0), "must be at least 1"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sockets, cores, threads, err := Topology(tc.guest, tc.pref)
			if tc.wantErr != nil {
				if diff := cmp.Diff(tc.wantErr, err); diff != "" {
					t.Fatalf("error (-want +got):\n%s", diff)
				}
				if sockets != 0 || cores != 0 || threads != 0 {
					t.Errorf("topology with an error = %d, %d, %d; want zeros", sockets, cores, threads)
				}
				return
			}
			if err != nil {
				t.Fatalf("Topology: %v", err)
			}
			if got := (topo{sockets, cores, threads}); got != tc.want {
				t.Errorf("Topology = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestTopologyCoversGuest checks that a layout always holds exactly the guest's vCPUs.
func TestTopologyCoversGuest(t *testing.T) {
	prefs := []*v1beta1.VirtualMachinePreferenceSpec{
		nil, topologyPref(v1beta1.Cores), topologyPref(v1beta1.Threads), topologyPref(v1beta1.Any),
		topologyPref(v1beta1.Spread), spreadPref(new(v1beta1.SpreadAcrossCoresThreads), nil),
		spreadPref(new(v1beta1.SpreadAcrossSocketsCoresThreads), new(int32(3))),
	}
	for _, pref := range prefs {
		for guest := int32(1); guest <= 64; guest++ {
			sockets, cores, threads, err := Topology(guest, pref)
			if err != nil {
				continue
			}
			if sockets*cores*threads != guest {
				t.Errorf("Topology(%d, %v) = %d×%d×%d", guest, PreferredTopology(pref), sockets, cores, threads)
			}
		}
	}
}
