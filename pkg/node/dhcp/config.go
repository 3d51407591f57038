package dhcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// ConfigFile is the name of the hand-off file in the launcher's private
// directory (the `private` emptyDir, /var/run/nativevirt in the pod).
const ConfigFile = "dhcp.json"

// DefaultLeaseSeconds is the lease the guest gets: a day, renewed after
// half of it. The lease never changes while the pod lives, so renewals are
// cheap; a short lease would only add traffic.
const DefaultLeaseSeconds = 24 * 60 * 60

// PrivateOption is a site-specific option (224–254) with a text value.
type PrivateOption struct {
	// Code is the option code.
	Code byte `json:"code"`
	// Value is the option's value.
	Value string `json:"value"`
}

// Config is what the node agent decides for the guest's DHCP: the
// launcher serves it. DNS resolvers and search domains come from the pod's
// resolv.conf, which the launcher reads itself.
type Config struct {
	// Interface is the bridge the server listens on (k6t-eth0).
	Interface string `json:"interface"`
	// ServerIP is the bridge's address: server identifier and, unless NoRouter, router.
	ServerIP net.IP `json:"serverIP"`
	// NoRouter leaves the router and DNS options out: a secondary network's guest interface
	// (the pod network's interface has those).
	NoRouter bool `json:"noRouter,omitempty"`
	// ClientIP is the guest's address.
	ClientIP net.IP `json:"clientIP"`
	// PrefixLength is the VM network's prefix length.
	PrefixLength int `json:"prefixLength"`
	// ClientMAC is the guest's MAC; other clients get no answer.
	ClientMAC string `json:"clientMAC"`
	// MTU is the pod interface's MTU (option 26); 0 sends none.
	MTU int `json:"mtu,omitempty"`
	// Hostname is the guest's host name (option 12).
	Hostname string `json:"hostname,omitempty"`
	// LeaseSeconds is the lease time (DefaultLeaseSeconds when 0).
	LeaseSeconds uint32 `json:"leaseSeconds,omitempty"`
	// BootFileName is option 67 (and the header's file field).
	BootFileName string `json:"bootFileName,omitempty"`
	// TFTPServerName is option 66.
	TFTPServerName string `json:"tftpServerName,omitempty"`
	// NTPServers is option 42.
	NTPServers []net.IP `json:"ntpServers,omitempty"`
	// PrivateOptions are options 224–254.
	PrivateOptions []PrivateOption `json:"privateOptions,omitempty"`
}

// Validate reports a configuration the server cannot serve.
func (c *Config) Validate() error {
	var errs []error
	if c.Interface == "" {
		errs = append(errs, errors.New("no interface"))
	}
	if c.ServerIP.To4() == nil || c.ClientIP.To4() == nil {
		errs = append(errs, fmt.Errorf("server %v and client %v must be IPv4 addresses", c.ServerIP, c.ClientIP))
	}
	if c.PrefixLength < 1 || c.PrefixLength > 30 {
		errs = append(errs, fmt.Errorf("prefix length %d is not 1 to 30", c.PrefixLength))
	}
	if mac, err := net.ParseMAC(c.ClientMAC); err != nil || len(mac) != 6 {
		errs = append(errs, fmt.Errorf("client MAC %q is not a 48-bit MAC address", c.ClientMAC))
	}
	if c.MTU != 0 && (c.MTU < 68 || c.MTU > 65535) {
		errs = append(errs, fmt.Errorf("MTU %d is not 68 to 65535", c.MTU))
	}
	for _, ip := range c.NTPServers {
		if ip.To4() == nil {
			errs = append(errs, fmt.Errorf("NTP server %v is not an IPv4 address", ip))
		}
	}
	for _, o := range c.PrivateOptions {
		if o.Code < 224 || o.Code > 254 {
			errs = append(errs, fmt.Errorf("private option code %d is not 224 to 254", o.Code))
		}
	}
	if len(c.BootFileName) > 255 || len(c.TFTPServerName) > 255 || len(c.Hostname) > 255 {
		errs = append(errs, errors.New("boot file, TFTP server and host names must fit in 255 bytes"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("dhcp config: %w", err)
	}
	return nil
}

// WriteConfig writes c into dir as ConfigFile (see WriteConfigAs).
func WriteConfig(dir string, c *Config) error { return WriteConfigAs(dir, ConfigFile, c) }

// WriteConfigAs writes c into dir as name atomically (a temporary file renamed over
// the old one), so that the launcher never reads half a file.
func WriteConfigAs(dir, name string, c *Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// ReadConfig reads and checks the configuration at path.
func ReadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("dhcp config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
