package dhcp

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func testConfig() Config {
	return Config{
		Interface: "k6t-eth0", ServerIP: net.IPv4(10, 0, 2, 1).To4(), ClientIP: net.IPv4(10, 0, 2, 2).To4(), PrefixLength: 24,
		ClientMAC: "52:54:00:12:34:56", MTU: 1450, Hostname: "vm1",
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	c := testConfig()
	c.NTPServers = []net.IP{net.IPv4(10, 0, 0, 5).To4()}
	c.PrivateOptions = []PrivateOption{{Code: 240, Value: "x"}}
	if err := WriteConfig(dir, &c); err != nil {
		t.Fatal(err)
	}
	// Written twice (a re-prepared pod): replaced, no temporary files left.
	if err := WriteConfig(dir, &c); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != ConfigFile {
		t.Errorf("directory holds %v, want only %s", entries, ConfigFile)
	}
	got, err := ReadConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&c, got); diff != "" {
		t.Errorf("(-written +read):\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"interface": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadConfig(filepath.Join(dir, "bad.json")); err == nil {
		t.Error("malformed file: no error")
	}
}

func TestConfigValidate(t *testing.T) {
	tests := map[string]func(*Config){
		"no interface":      func(c *Config) { c.Interface = "" },
		"IPv6 client":       func(c *Config) { c.ClientIP = net.ParseIP("fd00::2") },
		"prefix 31":         func(c *Config) { c.PrefixLength = 31 },
		"bad MAC":           func(c *Config) { c.ClientMAC = "52:54:00" },
		"MTU 20":            func(c *Config) { c.MTU = 20 },
		"IPv6 NTP":          func(c *Config) { c.NTPServers = []net.IP{net.ParseIP("fd00::1")} },
		"private option 12": func(c *Config) { c.PrivateOptions = []PrivateOption{{Code: 12}} },
		"long boot file":    func(c *Config) { c.BootFileName = strings.Repeat("b", 256) },
	}
	for name, mutate := range tests {
		c := testConfig()
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
		if err := WriteConfig(t.TempDir(), &c); err == nil {
			t.Errorf("%s: written", name)
		}
	}
	c := testConfig()
	if err := c.Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}
