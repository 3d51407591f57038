package fake

import (
	"bytes"
	"fmt"
	"os"
	"regexp"

	"github.com/nativevirt/nativevirt/pkg/node/virt"
)

var _ virt.Hotplugger = hotplugConn{}

// hotplugConn is the fake's Hotplugger: it edits the domain's XML as libvirt's live XML changes.
type hotplugConn struct{ *conn }

var aliasPattern = regexp.MustCompile(`<alias name="([^"]+)"`)

// AttachDisk adds the disk to the running domain's XML.
func (c hotplugConn) AttachDisk(name string, diskXML []byte, fdGroup string, file *os.File) error {
	return c.change("AttachDisk", name, func(dom *Domain) error {
		if !dom.Info.Active() {
			return fmt.Errorf("domain %s is not running", name)
		}
		if (file == nil) != (fdGroup == "") || (file == nil && !bytes.Contains(diskXML, []byte(`type="block"`))) {
			return fmt.Errorf("a file disk needs a descriptor and its fdgroup (a block disk neither)")
		}
		end := bytes.LastIndex(dom.XML, []byte("</devices>"))
		if end < 0 {
			return fmt.Errorf("domain %s has no devices", name)
		}
		dom.XML = append(append(append([]byte{}, dom.XML[:end]...), diskXML...), dom.XML[end:]...)
		return nil
	})
}

// DetachDisk removes the disk with the alias of diskXML from the domain's XML at once (a guest
// that releases it immediately).
func (c hotplugConn) DetachDisk(name string, diskXML []byte) error {
	return c.change("DetachDisk", name, func(dom *Domain) error {
		m := aliasPattern.FindSubmatch(diskXML)
		if m == nil {
			return fmt.Errorf("the disk has no alias")
		}
		alias := []byte(`<alias name="` + string(m[1]) + `"`)
		for start := 0; ; {
			i := bytes.Index(dom.XML[start:], []byte("<disk "))
			if i < 0 {
				return fmt.Errorf("domain %s has no disk %s", name, m[1])
			}
			i += start
			j := bytes.Index(dom.XML[i:], []byte("</disk>"))
			if j < 0 {
				return fmt.Errorf("domain %s: unterminated disk", name)
			}
			j += i + len("</disk>")
			if bytes.Contains(dom.XML[i:j], alias) {
				dom.XML = append(append([]byte{}, dom.XML[:i]...), dom.XML[j:]...)
				return nil
			}
			start = j
		}
	})
}
