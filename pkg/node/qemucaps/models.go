package qemucaps

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

// obsoleteCPUModels are the models KubeVirt's node labeller leaves out by default (its
// obsoleteCPUModels): too old to be worth scheduling by.
var obsoleteCPUModels = map[string]bool{
	"486": true, "pentium": true, "pentium2": true, "pentium3": true, "pentiumpro": true, "coreduo": true, "n270": true,
	"core2duo": true, "Conroe": true, "athlon": true, "phenom": true, "qemu64": true, "qemu32": true, "kvm64": true, "kvm32": true,
}

// notModels are QEMU's CPU names that stand for no model a guest names.
var notModels = map[string]bool{"max": true, "base": true, "host": true}

// versionSuffix is QEMU's versioned name of a model (Nehalem-v1): the model is Nehalem.
var versionSuffix = regexp.MustCompile(`-v[0-9]+$`)

// UsableCPUModels lists the CPU models that QEMU reports usable for guests of kind (KVM or TCG,
// KindKVM or KindTCG) in the node's capability files under
// dir, sorted, without versions, obsolete models, max, base and host.
func UsableCPUModels(dir, kind string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, kind, "*.xml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no QEMU capabilities of kind %s in %s", kind, dir)
	}
	seen := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var caps struct {
			CPUs []struct {
				Type   string `xml:"type,attr"`
				Name   string `xml:"name,attr"`
				Usable string `xml:"usable,attr"`
			} `xml:"cpu"`
		}
		if err := xml.Unmarshal(raw, &caps); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, c := range caps.CPUs {
			name := versionSuffix.ReplaceAllString(c.Name, "")
			if c.Type == kind && c.Usable == "yes" && !obsoleteCPUModels[name] && !notModels[name] {
				seen[name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out, nil
}
