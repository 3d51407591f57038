package app

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	kubevirtv1 "github.com/nativevirt/nativevirt/pkg/apis/kubevirt/v1"
	"github.com/nativevirt/nativevirt/pkg/node/agent"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(*Options)
		wantErr string
	}{
		{"defaults with a node name", func(*Options) {}, ""},
		{"no node name", func(o *Options) { o.NodeName = "" }, "--node-name"},
		{"bad emulation", func(o *Options) { o.Emulation = "sometimes" }, "--emulation"},
		{"relative state dir", func(o *Options) { o.StateDir = "state" }, "absolute"},
		{"port out of range", func(o *Options) { o.Port = 70000 }, "--port"},
		{"partial TLS", func(o *Options) { o.TLSCertFile = "/c.pem" }, "go together"},
		{"full TLS", func(o *Options) { o.TLSCertFile, o.TLSKeyFile, o.ClientCAFile = "/c", "/k", "/ca" }, ""},
		{"no workers", func(o *Options) { o.Workers = 0 }, "--workers"},
		{"zero QPS", func(o *Options) { o.QPS = 0 }, "--kube-api-qps"},
		{"zero burst", func(o *Options) { o.Burst = 0 }, "--kube-api-burst"},
	}
	for _, tt := range tests {
		o := NewOptions()
		o.NodeName = "n1"
		tt.mod(o)
		err := o.Validate()
		if tt.wantErr == "" && err != nil {
			t.Errorf("%s: unexpected error %v", tt.name, err)
		}
		if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: error %v, want one mentioning %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestEmulate(t *testing.T) {
	tests := []struct {
		mode, device string
		want         bool
	}{
		{EmulationAlways, "/dev/null", true},
		{EmulationNever, "/nonexistent/kvm", false},
		{EmulationAuto, "/nonexistent/kvm", true},
		{EmulationAuto, "/dev/null", false}, // opens read-write: stands for a usable /dev/kvm
	}
	for _, tt := range tests {
		o := &Options{Emulation: tt.mode, KVMDevice: tt.device}
		if got := o.emulate(); got != tt.want {
			t.Errorf("emulate(%s, %s) = %v, want %v", tt.mode, tt.device, got, tt.want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	o := &Options{Port: 8186}
	if got := o.endpoint("10.0.0.1"); got != "10.0.0.1:8186" {
		t.Errorf("endpoint = %q", got)
	}
	o.AdvertiseAddress = "fd00::1"
	if got := o.endpoint("10.0.0.1"); got != "[fd00::1]:8186" {
		t.Errorf("endpoint = %q", got)
	}
}

func TestCloudInitISO(t *testing.T) {
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"}}
	for _, kind := range []agent.CloudInitKind{agent.NoCloud, agent.ConfigDrive} {
		iso, err := CloudInitISO(kind, vmi, agent.CloudInitData{UserData: []byte("#!/bin/sh\n")})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		// busybox's findfs (cirros, the demo guest) sees no label on a device
		// shorter than the 0x11000 bytes it reads at once.
		if len(iso) < 0x11000 {
			t.Errorf("%s: ISO of %d bytes, want at least %d", kind, len(iso), 0x11000)
		}
		if string(iso[0x8001:0x8006]) != "CD001" {
			t.Errorf("%s: no ISO 9660 primary volume descriptor", kind)
		}
	}
}

func TestClientConfig(t *testing.T) {
	o := NewOptions()
	if o.QPS <= 5 || o.Burst <= 10 || o.Workers <= 2 {
		t.Errorf("defaults QPS %v, burst %d, workers %d: no higher than client-go's 5/10 and the old 2 workers", o.QPS, o.Burst, o.Workers)
	}
	o.QPS, o.Burst = 7, 9
	cfg := o.clientConfig(&rest.Config{Host: "https://example"})
	if cfg.QPS != 7 || cfg.Burst != 9 || cfg.UserAgent != "nativevirt-handler" {
		t.Errorf("client config QPS %v, burst %d, user agent %q", cfg.QPS, cfg.Burst, cfg.UserAgent)
	}
}

// TestComplete: the completed configuration derives the advertised endpoint, the listen
// addresses and the device plugins from the options; without TLS files no metrics server and
// no migration tunnels.
func TestComplete(t *testing.T) {
	o := NewOptions()
	o.NodeName, o.AdvertiseAddress, o.QEMUCapabilitiesDir = "n1", "10.0.0.5", ""
	c, err := (&Config{NodeName: o.NodeName, options: o}).Complete(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "10.0.0.5:8186" || c.StreamAddress != "0.0.0.0:8186" {
		t.Errorf("endpoint %q, stream address %q", c.Endpoint, c.StreamAddress)
	}
	if c.MetricsAddress != "" || c.Agent.Migration.DialTunnel != nil || c.Agent.Migration.Endpoint != "" {
		t.Errorf("without TLS: metrics address %q, migration endpoint %q", c.MetricsAddress, c.Agent.Migration.Endpoint)
	}
	if len(c.DevicePlugins) != 2 || c.DevicePlugins[0].Dir != "/var/lib/kubelet/device-plugins" {
		t.Errorf("device plugins %+v", c.DevicePlugins)
	}
	o.DevicePlugins = false
	if c, err := (&Config{NodeName: o.NodeName, options: o}).Complete(t.Context()); err != nil || len(c.DevicePlugins) != 0 {
		t.Errorf("--device-plugins=false: %+v, %v", c.DevicePlugins, err)
	}
}
