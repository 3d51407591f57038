package deviceplugin

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

// kubelet is a fake registration endpoint.
type kubelet struct {
	pluginapi.UnimplementedRegistrationServer
	got chan *pluginapi.RegisterRequest
}

func (k *kubelet) Register(_ context.Context, r *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	k.got <- r
	return &pluginapi.Empty{}, nil
}

func TestPlugin(t *testing.T) {
	for _, tt := range []struct {
		name string
		// sub is appended to a temporary directory.
		sub string
	}{
		{name: "kubelet directory with a short path"},
		// A kubelet --root-dir in a deep checkout, as with the nodes of the local cluster:
		// the sockets' paths exceed the 108 bytes of a unix socket address.
		{name: "kubelet directory deeper than a socket address holds", sub: strings.Repeat("deep-directory/", 8)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tt.sub)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if long := len(filepath.Join(dir, "nativevirt-kvm.sock")) > 108; long != (tt.sub != "") {
				t.Fatalf("socket path of %d bytes: the case needs another directory", len(dir))
			}
			testPlugin(t, dir)
		})
	}
}

func testPlugin(t *testing.T, dir string) {
	dev := filepath.Join(dir, "kvm")
	if err := os.WriteFile(dev, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The test names the sockets through the directory's descriptor too (the long case).
	d, err := podfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	k := &kubelet{got: make(chan *pluginapi.RegisterRequest, 4)}
	ln, err := net.Listen("unix", d.Path("kubelet.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ks := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(ks, k)
	go func() { _ = ks.Serve(ln) }()
	defer ks.Stop()

	p := &Plugin{ResourceName: KVMResource, DevicePath: dev, Slots: 3, Dir: dir, HealthInterval: 20 * time.Millisecond, RetryDelay: 10 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.Run(ctx) }()

	var reg *pluginapi.RegisterRequest
	select {
	case reg = <-k.got:
	case <-time.After(10 * time.Second):
		t.Fatal("plugin did not register")
	}
	if reg.ResourceName != KVMResource || reg.Version != pluginapi.Version || reg.Endpoint != "nativevirt-kvm.sock" {
		t.Errorf("registration = %v", reg)
	}

	conn, err := grpc.NewClient("unix://"+d.Path(reg.Endpoint), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pluginapi.NewDevicePluginClient(conn)

	stream, err := client.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	health := func() []string {
		t.Helper()
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range resp.Devices {
			out = append(out, d.ID+"="+d.Health)
		}
		return out
	}
	if diff := cmp.Diff([]string{"kvm-0=Healthy", "kvm-1=Healthy", "kvm-2=Healthy"}, health()); diff != "" {
		t.Errorf("first list (-want +got):\n%s", diff)
	}
	if err := os.Remove(dev); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"kvm-0=Unhealthy", "kvm-1=Unhealthy", "kvm-2=Unhealthy"}, health()); diff != "" {
		t.Errorf("list after the device vanished (-want +got):\n%s", diff)
	}

	resp, err := client.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"kvm-0"}}, {DevicesIds: []string{"kvm-1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ContainerResponses) != 2 {
		t.Fatalf("%d container responses, want 2", len(resp.ContainerResponses))
	}
	for _, cr := range resp.ContainerResponses {
		got := []string{}
		for _, d := range cr.Devices {
			got = append(got, d.HostPath+":"+d.ContainerPath+":"+d.Permissions)
		}
		if diff := cmp.Diff([]string{dev + ":" + dev + ":rw"}, got); diff != "" {
			t.Errorf("allocated devices (-want +got):\n%s", diff)
		}
	}

	// A kubelet restart removes the plugin sockets: the plugin registers again.
	if err := os.Remove(filepath.Join(dir, reg.Endpoint)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-k.got:
	case <-time.After(15 * time.Second):
		t.Fatal("plugin did not re-register after its socket was removed")
	}
}
