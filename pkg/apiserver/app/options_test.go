package app

import (
	"testing"

	cliflag "k8s.io/component-base/cli/flag"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
)

// A resource has a watch cache, and so the sharing one, as the generic etcd flags decide.
func TestWatchCached(t *testing.T) {
	vms, vmis := kubevirtv1.Resource("virtualmachines"), kubevirtv1.Resource("virtualmachineinstances")
	for _, tc := range []struct {
		args      []string
		vms, vmis bool
		wantErr   bool
	}{
		{args: nil, vms: true, vmis: true},
		{args: []string{"--watch-cache=false"}},
		{args: []string{"--watch-cache-sizes=virtualmachines.kubevirt.io#0"}, vmis: true},
		{args: []string{"--watch-cache-sizes=virtualmachines.kubevirt.io#100"}, vms: true, vmis: true},
		{args: []string{"--watch-cache-sizes=virtualmachines.kubevirt.io"}, wantErr: true},
	} {
		o := NewOptions()
		var fss cliflag.NamedFlagSets
		o.AddFlags(&fss)
		if err := fss.FlagSet("generic").Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		gotVMs, err := o.watchCached(vms)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%v: no error", tc.args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		gotVMIs, _ := o.watchCached(vmis)
		if gotVMs != tc.vms || gotVMIs != tc.vmis {
			t.Errorf("%v: cached VMs %v, VMIs %v; want %v, %v", tc.args, gotVMs, gotVMIs, tc.vms, tc.vmis)
		}
	}
}
