// Package deviceplugin serves kubelet device plugins for the host devices a
// launcher pod needs without being privileged: devices.nativevirt.io/kvm
// (/dev/kvm) and devices.nativevirt.io/tun (/dev/net/tun). Each plugin
// advertises a fixed number of interchangeable slots of one device node (many
// pods share /dev/kvm) and, on allocation, has the kubelet pass the device
// node into the container. Health follows the existence of the device node.
package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nativevirt/nativevirt/pkg/node/podfs"
)

const (
	// KVMResource is the resource of /dev/kvm.
	KVMResource = "devices.nativevirt.io/kvm"
	// TUNResource is the resource of /dev/net/tun.
	TUNResource = "devices.nativevirt.io/tun"
	// DefaultSlots is how many pods per node may hold the device at once.
	DefaultSlots = 110
	// healthInterval is how often the device node's presence is checked.
	healthInterval = 10 * time.Second
)

// Plugin is one device plugin.
type Plugin struct {
	pluginapi.UnimplementedDevicePluginServer

	// ResourceName is the extended resource, e.g. KVMResource.
	ResourceName string
	// DevicePath is the device node, the same on the host and in the container.
	DevicePath string
	// Slots is the number of devices advertised (DefaultSlots when 0).
	Slots int
	// Dir is the kubelet's device plugin directory (holds kubelet.sock).
	Dir string
	// HealthInterval overrides how often health is checked (tests).
	HealthInterval time.Duration
	// RetryDelay overrides the pause before serving again (tests).
	RetryDelay time.Duration
}

var _ pluginapi.DevicePluginServer = &Plugin{}

// socketName is the plugin's socket file name in Dir.
func (p *Plugin) socketName() string {
	return "nativevirt-" + filepath.Base(p.DevicePath) + ".sock"
}

// devices lists the slots with the current health.
func (p *Plugin) devices() []*pluginapi.Device {
	health := pluginapi.Healthy
	if _, err := os.Stat(p.DevicePath); err != nil {
		health = pluginapi.Unhealthy
	}
	n := p.Slots
	if n <= 0 {
		n = DefaultSlots
	}
	out := make([]*pluginapi.Device, n)
	base := filepath.Base(p.DevicePath)
	for i := range out {
		out[i] = &pluginapi.Device{ID: base + "-" + strconv.Itoa(i), Health: health}
	}
	return out
}

// GetDevicePluginOptions implements pluginapi.DevicePluginServer.
func (p *Plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch implements pluginapi.DevicePluginServer: the slot list, sent
// again whenever the device node's health changes.
func (p *Plugin) ListAndWatch(_ *pluginapi.Empty, s grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	every := p.HealthInterval
	if every <= 0 {
		every = healthInterval
	}
	devs := p.devices()
	if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
		return err
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.Context().Done():
			return nil
		case <-t.C:
			now := p.devices()
			if now[0].Health == devs[0].Health {
				continue
			}
			devs = now
			if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: devs}); err != nil {
				return err
			}
		}
	}
}

// Allocate implements pluginapi.DevicePluginServer: every container gets the
// device node, read-write.
func (p *Plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for range req.ContainerRequests {
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Devices: []*pluginapi.DeviceSpec{{ContainerPath: p.DevicePath, HostPath: p.DevicePath, Permissions: "rw"}},
		})
	}
	return resp, nil
}

// PreStartContainer implements pluginapi.DevicePluginServer (nothing to do).
func (p *Plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

// Run serves the plugin and registers it with the kubelet, and does both
// again whenever the kubelet restarts (it then deletes the plugin sockets),
// until ctx ends.
func (p *Plugin) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("resource", p.ResourceName)
	for {
		err := p.serveOnce(ctx, logger)
		if ctx.Err() != nil {
			return nil
		}
		logger.Error(err, "Device plugin stopped; restarting")
		delay := p.RetryDelay
		if delay <= 0 {
			delay = 5 * time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
}

// serveOnce serves until the socket disappears or ctx ends.
func (p *Plugin) serveOnce(ctx context.Context, logger klog.Logger) error {
	// The sockets are named through an open descriptor of the directory: below a kubelet
	// --root-dir deeper than /var/lib/kubelet their paths can exceed the 108 bytes a unix
	// socket address holds. The directory is opened again on every serve: it may have been
	// recreated.
	dir, err := podfs.Open(p.Dir)
	if err != nil {
		return err
	}
	defer func() { _ = dir.Close() }()
	sock := dir.Path(p.socketName())
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer srv.Stop()

	if err := p.register(ctx, dir.Path(filepath.Base(pluginapi.KubeletSocket))); err != nil {
		return err
	}
	logger.Info("Device plugin registered", "socket", dir.HostPath(p.socketName()))
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			return err
		case <-t.C:
			if _, err := os.Stat(sock); err != nil {
				return fmt.Errorf("plugin socket removed (kubelet restarted?): %w", err)
			}
		}
	}
}

// register announces the plugin to the kubelet's registration socket at path.
func (p *Plugin) register(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     p.socketName(),
		ResourceName: p.ResourceName,
		Options:      &pluginapi.DevicePluginOptions{},
	})
	if err != nil {
		return fmt.Errorf("registering %s with the kubelet: %w", p.ResourceName, err)
	}
	return nil
}
